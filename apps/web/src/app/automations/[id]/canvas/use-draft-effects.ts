"use client";

import { type Dispatch, type RefObject, type SetStateAction, useEffect } from "react";
import type { FlowNode } from "./graph-model";
import type { useAutosave } from "./use-autosave";

/** Each step shows the problems the last save found in it (a node changes only when its problems do). */
export function useProblemsOnNodes(byNode: Map<string, string[]>, setNodes: Dispatch<SetStateAction<FlowNode[]>>) {
  useEffect(() => {
    setNodes((ns) => {
      let changed = false;
      const next = ns.map((n) => {
        const p = byNode.get(n.id) ?? [];
        if (p.join("\n") === n.data.problems.join("\n")) return n;
        changed = true;
        return { ...n, data: { ...n.data, problems: p } };
      });
      return changed ? next : ns;
    });
  }, [byNode, setNodes]);
}

/** Autosave 0.8 s after the last change, and a history entry for undo. */
export function useSaveOnChange({ loaded, canEdit, graphText, autosave, record }: {
  loaded: RefObject<boolean>;
  canEdit: boolean;
  graphText: string;
  autosave: ReturnType<typeof useAutosave>;
  record: (text: string) => void;
}) {
  // biome-ignore lint/correctness/useExhaustiveDependencies: one save per settled change of the graph, nothing else
  useEffect(() => {
    if (!loaded.current || !canEdit || graphText === autosave.lastSaved.current || autosave.state === "conflict") return;
    if (autosave.state !== "busy") autosave.setState("dirty");
    const timer = setTimeout(() => {
      record(graphText);
      void autosave.flush();
    }, 800);
    return () => clearTimeout(timer);
  }, [graphText]);
}

/** An unsaved edit is never lost by leaving the page unwarned. */
export function useWarnUnsaved(graphText: string, lastSaved: RefObject<string>) {
  useEffect(() => {
    const warn = (e: BeforeUnloadEvent) => {
      if (graphText !== lastSaved.current) e.preventDefault();
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [graphText, lastSaved]);
}
