"use client";

import type { Edge } from "@xyflow/react";
import type { Dispatch, SetStateAction } from "react";
import { bridgesOver } from "./graph-edit";
import type { FlowNode } from "./graph-model";
import { useAddSteps } from "./use-add-steps";
import { useCopyPaste } from "./use-copy-paste";

/** What the dialog over the canvas asks: a kind for a new step (on an edge, or after a step), an output, or a step to find. */
export type Asking = { what: "kind"; edgeId?: string; after?: string } | { what: "output"; kind: string; after: string } | { what: "find" } | null;

/** The canvas's state and the editor's callbacks the step edits work with. */
export interface StepEditsContext {
  nodes: FlowNode[];
  edges: Edge[];
  setNodes: Dispatch<SetStateAction<FlowNode[]>>;
  setEdges: Dispatch<SetStateAction<Edge[]>>;
  publishedIds: ReadonlySet<string>;
  canEdit: boolean;
  current: FlowNode | undefined;
  selectedNodes: FlowNode[];
  reveal: (id: string, focus: boolean) => void;
  setMessage: (text: string | null) => void;
  setTab: (tab: "step" | "preview") => void;
  setAsking: (asking: Asking) => void;
}

/**
 * The canvas's step edits: add a step (after a step on a chosen output, on an edge, dropped from the palette),
 * join the neighbours of deleted steps, copy, paste and duplicate. The pure rules are in graph-edit.ts, clipboard.ts
 * and layout-graph.ts; this only applies them to the canvas's state and says what happened.
 */
export function useStepEdits(ctx: StepEditsContext) {
  const { edges, setEdges } = ctx;
  const { addStep, addAfterOn, addAfterSelected, insertStep } = useAddSteps(ctx);
  const { copy, paste, duplicate } = useCopyPaste(ctx);

  /** Deleted steps with one way in and one way out leave their neighbours joined. */
  const onNodesDelete = (deleted: FlowNode[]) => {
    const bridges = bridgesOver(edges, new Set(deleted.map((d) => d.id)));
    if (bridges.length) setEdges((es) => [...es, ...bridges.filter((b) => !es.some((e) => e.id === b.id))]);
  };

  return { addStep, addAfterOn, addAfterSelected, insertStep, onNodesDelete, copy, paste, duplicate };
}

export type StepEdits = ReturnType<typeof useStepEdits>;
