"use client";

import { defaultConfigIn } from "@holdfast/core/kinds";
import type { Edge } from "@xyflow/react";
import { kindInfo, newNodeId } from "../../kinds";
import { downstream, makeRoom, placeNew } from "../../layout-graph";
import { connectAfter, insertOnEdge } from "./graph-edit";
import { type FlowNode, outputsOf } from "./graph-model";
import type { StepEditsContext } from "./use-step-edits";

/**
 * Adding steps: after a step on a chosen output, on an edge (its "+"), dropped from the palette. A step put in
 * between pushes the rest down instead of covering it.
 */
export function useAddSteps(ctx: StepEditsContext) {
  const { nodes, edges, setNodes, setEdges, publishedIds, current, reveal, setMessage, setTab, setAsking } = ctx;
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
    if (outputsOf(after.data.kind, after.data.config).length === 0) return addStep(kind, placeNew(nodes, after), (es) => es);
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
    const outputs = outputsOf(after.data.kind, after.data.config);
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

  return { addStep, addAfterOn, addAfterSelected, insertStep };
}
