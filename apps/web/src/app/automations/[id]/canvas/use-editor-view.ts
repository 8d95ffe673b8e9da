"use client";

import { useCallback, useState } from "react";
import type { EditorView } from "./editor-bar";

/** Which view the editor shows (edit or counts), kept in the address so a reload or a shared link opens it again. */
export function useEditorView(initial: EditorView): [EditorView, (v: EditorView) => void] {
  const [view, setView] = useState<EditorView>(initial);
  const choose = useCallback((v: EditorView) => {
    setView(v);
    const url = new URL(window.location.href);
    if (v === "counts") url.searchParams.set("view", "counts");
    else url.searchParams.delete("view");
    window.history.replaceState(window.history.state, "", url);
  }, []);
  return [view, choose];
}
