"use client";

import type { Edge } from "@xyflow/react";
import type { Dispatch, SetStateAction } from "react";
import { defaultConfigIn } from "@holdfast/core/kinds";
import { kindInfo, newNodeId } from "../../kinds";
import { downstream, freeOffset, makeRoom, placeNew } from "../../layout-graph";
import { copySteps, pasteSteps, type Snippet } from "./clipboard";
import { bridgesOver, connectAfter, insertOnEdge } from "./graph-edit";
import { type FlowNode, outputsOf } from "./graph-model";

/** What the dialog over the canvas asks: a kind for a new step (on an edge, or after a step), an output, or a step to find. */
export type Asking = { what: "kind"; edgeId?: string; after?: string } | { what: "output"; kind: string; after: string } | { what: "find" } | null;

/** Copied steps stay available to paste in any automation of this tab. */
let clipboard: Snippet | null = null;

/**
 * The canvas's step edits: add a step (after a step on a chosen output, on an edge, dropped from the palette),
 * join the neighbours of deleted steps, copy, paste and duplicate. The pure rules are in graph-edit.ts, clipboard.ts
 * and layout-graph.ts; this only applies them to the canvas's state and says what happened.
 */
export function useStepEdits(ctx: {
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
}) {
  const { nodes, edges, setNodes, setEdges, publishedIds, canEdit, current, selectedNodes, reveal, setMessage, setTab, setAsking } = ctx;
  /**
   * A new step of `kind` at `position`, selected, with the edges `wire` gives; the steps at and below `room` move one
   * layer down first (a step put in between pushes the rest down instead of covering it).
   */
  const addStep = (kind: string, position: { x: number; y: number } | null, wire: (es: Edge[], id: string) => Edge[], room?: { y: number; from: string }) => {
    const info = kindInfo(kind);
    if (!info) return null;
    const id = newNodeId(kind, new Set(nodes.map((n) => n.id)), publishedIds);
    const at = position ?? placeNew(nodes, undefined);
    const step: FlowNode = { id, type: "step", position: at, selected: true, data: { kind, config: defaultConfigIn(kind, nodes.map((n) => n.data)), problems: [] } };
    const below = room ? downstream(room.from, edges) : null;
    setNodes((ns) => [...(room ? makeRoom(ns, room, below ?? undefined) : ns).map((n) => (n.selected ? { ...n, selected: false } : n)), step]);
    setEdges((es) => wire(es, id));
    setTab("step");
    reveal(id, true);
    return id;
  };

  /** "Add after" on one output of a step: connected when the output is free, else in between (after -> new -> next). */
  const addAfterOn = (kind: string, afterId: string, output: string | null) => {
    const after = nodes.find((n) => n.id === afterId);
    if (!after || kind === "trigger") return addStep(kind, placeNew(nodes, after), (es) => es);
    const next = edges.find((e) => e.source === afterId && (e.sourceHandle ?? null) === output);
    const target = next ? nodes.find((n) => n.id === next.target) : undefined;
    const own = outputsOf(kind);
    if (outputsOf(after.data.kind).length === 0) return addStep(kind, placeNew(nodes, after), (es) => es);
    if (target) {
      const id = addStep(kind, { ...target.position }, (es, newId) => connectAfter(es, afterId, output, newId, own), { ...target.position, from: target.id });
      if (id && own.length > 1) setMessage(`"${id}" continues on its first output (${own[0]}): wire the others from its outputs or its drawer's "Then".`);
      return id;
    }
    return addStep(kind, placeNew(nodes, after), (es, newId) => connectAfter(es, afterId, output, newId, own));
  };

  /** A palette click (or A on the canvas): after the selected step; a step with several outputs asks which one. */
  const addAfterSelected = (kind: string, afterId = current?.id) => {
    const after = nodes.find((n) => n.id === afterId);
    if (!after) return addStep(kind, null, (es) => es);
    const outputs = outputsOf(after.data.kind);
    if (outputs.length > 1 && kind !== "trigger") {
      setAsking({ what: "output", kind, after: after.id });
      return;
    }
    addAfterOn(kind, after.id, outputs[0] ?? null);
  };

  /** A new step on an edge (its "+"): source -> new -> target, the rest pushed down one layer. */
  const insertStep = (kind: string, edgeId: string) => {
    const edge = edges.find((e) => e.id === edgeId);
    const target = nodes.find((n) => n.id === edge?.target);
    if (!edge || !target) return;
    const own = outputsOf(kind);
    const id = addStep(kind, { ...target.position }, (es, newId) => insertOnEdge(es, edgeId, newId, own), { ...target.position, from: target.id });
    if (id) {
      setMessage(
        own.length > 1
          ? `Put "${id}" between "${edge.source}" and "${edge.target}"; it continues on its first output (${own[0]}): wire the others from its outputs or its drawer's "Then".`
          : `Put "${id}" between "${edge.source}" and "${edge.target}".`,
      );
    }
  };

  /** Deleted steps with one way in and one way out leave their neighbours joined. */
  const onNodesDelete = (deleted: FlowNode[]) => {
    const bridges = bridgesOver(edges, new Set(deleted.map((d) => d.id)));
    if (bridges.length) setEdges((es) => [...es, ...bridges.filter((b) => !es.some((e) => e.id === b.id))]);
  };

  const copy = () => {
    const snippet = copySteps(nodes, edges, new Set(selectedNodes.map((n) => n.id)));
    if (!snippet) return setMessage(selectedNodes.length ? "The trigger is not copied: an automation has one." : "Select the steps to copy first.");
    clipboard = snippet;
    setMessage(`Copied ${snippet.nodes.length} step${snippet.nodes.length === 1 ? "" : "s"}: Ctrl+V pastes.`);
  };
  const paste = (snippet = clipboard) => {
    if (!snippet || !canEdit) return;
    const offset = freeOffset(nodes, snippet.nodes.map((n) => n.position));
    const out = pasteSteps(snippet, new Set(nodes.map((n) => n.id)), publishedIds, offset);
    setNodes((ns) => [...ns.map((n) => (n.selected ? { ...n, selected: false } : n)), ...out.nodes]);
    setEdges((es) => [...es, ...out.edges]);
    const ids = [...out.ids.values()];
    setMessage(`Added ${ids.map((id) => `"${id}"`).join(", ")}: connect ${ids.length === 1 ? "it" : "them"} where ${ids.length === 1 ? "it goes" : "they go"}.`);
    if (ids.length === 1) reveal(ids[0] as string, true);
  };
  const duplicate = () => {
    const snippet = copySteps(nodes, edges, new Set(selectedNodes.map((n) => n.id)));
    if (snippet) paste(snippet);
  };
  return { addStep, addAfterOn, addAfterSelected, insertStep, onNodesDelete, copy, paste, duplicate };
}
