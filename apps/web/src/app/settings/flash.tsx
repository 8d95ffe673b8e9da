"use client";

import { useState } from "react";

/** The outcome of a settings form, in a sentence: green when it worked, red (with what to do) when it did not. */
export function useFlash() {
  const [flash, setFlash] = useState<{ ok: boolean; text: string } | null>(null);
  const attempt = async (work: () => Promise<string>) => {
    setFlash(null);
    try {
      setFlash({ ok: true, text: await work() });
      return true;
    } catch (error) {
      setFlash({ ok: false, text: (error as Error).message });
      return false;
    }
  };
  const view = flash && (
    <p className={`flash ${flash.ok ? "flash-ok" : "flash-error"}`} role={flash.ok ? "status" : "alert"} data-flash={flash.ok ? "ok" : "error"}>
      {flash.text}
    </p>
  );
  return { attempt, view, clear: () => setFlash(null) };
}

/** A number field's value, or null when empty. */
export const numberOrNull = (raw: string): number | null => (raw.trim() === "" ? null : Number(raw));
