"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "../../../../server/trpc/client";
import { type GraphJson, toFlow, toGraph } from "./graph-model";
import { runSaveLoop, type Saved, type SaveLoop, type SaveState } from "./save-loop";

export type { SaveState } from "./save-loop";

/**
 * Autosave: 0.8 s after the last change, one save at a time, each on top of the revision the previous one returned
 * (an edit made while a slow save is in flight waits for it and then saves on its revision). A save the server could
 * not take (busy, unreachable, timed out) is kept and tried again by itself, 2 s, 4 s ... up to every 30 s. Only the
 * server's CONFLICT is a conflict, and even then a draft that already holds exactly this graph is this tab's own
 * save whose answer was lost: it is taken as saved. The loop itself is in save-loop.ts.
 */
export function useAutosave(opts: {
  input: { orgSlug: string; automationId: string };
  graph: GraphJson;
  graphText: string;
  onSaved: (saved: Saved) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const save = useMutation(trpc.drafts.save.mutationOptions({ retry: false }));
  const [state, setState] = useState<SaveState>("saved");
  const [refusal, setRefusal] = useState<string | null>(null);
  const [revision, setRevision] = useState(0);
  const revisionRef = useRef(0);
  const lastSaved = useRef("");
  const latest = useRef({ graph: opts.graph, text: opts.graphText });
  latest.current = { graph: opts.graph, text: opts.graphText };
  const saving = useRef(false);
  const attempts = useRef(0);
  const retryTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onSaved = useRef(opts.onSaved);
  onSaved.current = opts.onSaved;
  const { input } = opts;

  const accept = (saved: Saved, text: string) => {
    lastSaved.current = text;
    revisionRef.current = saved.revision;
    setRevision(saved.revision);
    onSaved.current(saved);
    queryClient.setQueryData(trpc.drafts.get.queryKey(input), saved as never);
  };

  /** After a CONFLICT: the draft as stored now. When it is exactly what this tab sent, that save landed. */
  const landedAlready = async (text: string): Promise<boolean> => {
    try {
      const fresh = await queryClient.fetchQuery({ ...trpc.drafts.get.queryOptions(input), staleTime: 0 });
      const stored = toFlow(fresh.graph as GraphJson);
      if (JSON.stringify(toGraph(stored.nodes, stored.edges)) !== text) return false;
      accept(fresh, text);
      return true;
    } catch {
      return false;
    }
  };

  const loop: SaveLoop = {
    latest, lastSaved, revision: revisionRef, saving, attempts, retryTimer, setState, setRefusal, accept, landedAlready,
    save: (graph, baseRevision) => save.mutateAsync({ ...input, graph, baseRevision }),
  };
  const flush = (baseOverride?: () => Promise<number>) => runSaveLoop(loop, baseOverride);

  useEffect(() => () => void (retryTimer.current && clearTimeout(retryTimer.current)), []);

  /** Loads the saved draft: loading alone never saves. */
  const loaded = (text: string, rev: number) => {
    lastSaved.current = text;
    revisionRef.current = rev;
    setRevision(rev);
  };

  /** The person chose this tab's graph over the other save: it is saved on top of the draft's current revision. */
  const keepMine = () =>
    flush(async () => (await queryClient.fetchQuery({ ...trpc.drafts.get.queryOptions(input), staleTime: 0 })).revision);

  return { state, setState, refusal, revision, lastSaved, flush, loaded, keepMine, busy: state === "busy" };
}
