"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../../server/trpc/client";

export const actionWords: Record<string, string> = { pause: "Paused", resume: "Resumed", archive: "Archived", restore: "Restored", stop_runs: "Stopped all runs", fire_wait: "Fired a wait now" };

/**
 * The lifecycle bar's state: the automation's status and versions, which panel is open with its choices, the
 * running runs' count (while Stop all runs is open), and the changes with what came of them.
 */
export function useLifecycle(orgSlug: string, automationId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const state = useQuery(trpc.lifecycle.get.queryOptions({ orgSlug, automationId }));
  const versions = useQuery(trpc.versions.list.queryOptions({ orgSlug, automationId }));
  const change = useMutation(trpc.lifecycle.change.mutationOptions());
  const stop = useMutation(trpc.lifecycle.stopRuns.mutationOptions());
  const [panel, setPanel] = useState<"none" | "pause" | "archive" | "stop">("none");
  const [mode, setMode] = useState<"refuse" | "hold">("refuse");
  const [runs, setRuns] = useState<"continue" | "hold">("continue");
  const [version, setVersion] = useState<number | null>(null);
  const [reason, setReason] = useState("");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const count = useQuery({ ...trpc.lifecycle.countRuns.queryOptions({ orgSlug, automationId, version }), enabled: panel === "stop" });

  const refresh = () => reloadAfterWrite(queryClient, trpc.lifecycle.get.queryKey({ orgSlug, automationId }));
  const run = async (work: () => Promise<string>) => {
    setMessage(null);
    try {
      setMessage({ ok: true, text: await work() });
      setPanel("none");
    } catch (err) {
      setMessage({ ok: false, text: `Not done: ${(err as Error).message}` });
    }
    await refresh();
    // The editor's read-only state follows the status: reload the page after archive/restore.
  };
  const act = (c: Parameters<typeof change.mutateAsync>[0]["change"]) =>
    run(async () => {
      const out = await change.mutateAsync({ orgSlug, automationId, change: c });
      if (!out.changed) return "Nothing to change: it already is that way.";
      const held = out.heldRuns ? ` ${out.heldRuns} running run${out.heldRuns === 1 ? " is" : "s are"} held.` : "";
      const released = out.releasedRuns ? ` ${out.releasedRuns} held run${out.releasedRuns === 1 ? "" : "s"} released.` : "";
      if (c.action === "archive" || c.action === "restore") window.location.reload();
      return `${actionWords[c.action]}.${held}${released}`;
    });
  const stopRuns = () =>
    run(async () => {
      const out = await stop.mutateAsync({ orgSlug, automationId, version, reason, confirmCount: count.data?.running ?? 0 });
      await count.refetch();
      const later = out.requested ? ` ${out.requested} stop as soon as their outside call settles.` : "";
      return `Stopped: ${out.cancelled} cancelled.${later} What they already sent or wrote stays as it is.`;
    });
  const toggle = (which: "pause" | "archive" | "stop") => setPanel(panel === which ? "none" : which);

  return { state, versions, change, stop, panel, toggle, mode, setMode, runs, setRuns, version, setVersion, reason, setReason, message, count, act, stopRuns };
}

export type Lifecycle = ReturnType<typeof useLifecycle>;
