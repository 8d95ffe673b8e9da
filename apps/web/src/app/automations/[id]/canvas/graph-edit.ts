import type { Edge } from "@xyflow/react";
import { edgeOf } from "./graph-model";

/**
 * Edits of the wiring that keep the journey whole. Pure: edges in, edges out.
 */

/**
 * A new step on an edge: source -> new -> target. A new step with several outputs continues on its first output;
 * an end (no outputs) only takes the incoming edge.
 */
export function insertOnEdge(edges: Edge[], edgeId: string, newId: string, newOutputs: (string | null)[]): Edge[] {
  const edge = edges.find((e) => e.id === edgeId);
  if (!edge) return edges;
  const rest = edges.filter((e) => e.id !== edgeId);
  const inbound = edgeOf(edge.source, newId, edge.sourceHandle);
  if (newOutputs.length === 0) return [...rest, inbound];
  return [...rest, inbound, edgeOf(newId, edge.target, newOutputs[0])];
}

/**
 * The edges that bridge deleted steps: a deleted step with exactly one incoming and one outgoing edge has its
 * neighbours joined (the incoming edge's output now leads where the step led). Others leave a gap to wire by hand.
 */
export function bridgesOver(edges: Edge[], deleted: ReadonlySet<string>): Edge[] {
  const out: Edge[] = [];
  for (const id of deleted) {
    const inbound = edges.filter((e) => e.target === id);
    const outbound = edges.filter((e) => e.source === id);
    if (inbound.length !== 1 || outbound.length !== 1) continue;
    const [from, to] = [inbound[0] as Edge, outbound[0] as Edge];
    if (deleted.has(from.source) || deleted.has(to.target) || from.source === to.target) continue;
    out.push(edgeOf(from.source, to.target, from.sourceHandle));
  }
  return out;
}

/**
 * "Add after" the step `after` on its output `output`: connected when the output is free, else the new step goes in
 * between (after -> new -> what came next).
 */
export function connectAfter(edges: Edge[], after: string, output: string | null, newId: string, newOutputs: (string | null)[]): Edge[] {
  const next = edges.find((e) => e.source === after && (e.sourceHandle ?? null) === output);
  if (!next) return [...edges, edgeOf(after, newId, output)];
  return insertOnEdge(edges, next.id, newId, newOutputs);
}

/** Wires one output of a node (the same as dragging its handle): replaces that output's edge. */
export function setOutput(edges: Edge[], source: string, output: string | null, target: string): Edge[] {
  return [...edges.filter((e) => !(e.source === source && (e.sourceHandle ?? null) === output)), ...(target ? [edgeOf(source, target, output)] : [])];
}
