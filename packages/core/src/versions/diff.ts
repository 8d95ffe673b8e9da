import { canonicalJson } from "../base/json";
import type { Graph, GraphEdge, GraphNode } from "./graph";

/**
 * What changed between two versions of a graph, for people: nodes added, removed and changed (kind, name, each
 * config field that differs), edges added and removed. Layout (positions) is not a change. Pure.
 */
export interface GraphDiff {
  added: { id: string; kind: string }[];
  removed: { id: string; kind: string }[];
  changed: { id: string; kind: string; fields: { field: string; from: unknown; to: unknown }[] }[];
  edgesAdded: GraphEdge[];
  edgesRemoved: GraphEdge[];
}

const edgeKey = (e: GraphEdge) => `${e.from}->${e.to}${e.label ? `:${e.label}` : ""}`;

export function diffGraphs(from: Pick<Graph, "nodes" | "edges">, to: Pick<Graph, "nodes" | "edges">): GraphDiff {
  const before = new Map(from.nodes.map((n) => [n.id, n]));
  const after = new Map(to.nodes.map((n) => [n.id, n]));
  const added = to.nodes.filter((n) => !before.has(n.id)).map((n) => ({ id: n.id, kind: n.kind }));
  const removed = from.nodes.filter((n) => !after.has(n.id)).map((n) => ({ id: n.id, kind: n.kind }));
  const changed: GraphDiff["changed"] = [];
  for (const n of to.nodes) {
    const old = before.get(n.id);
    if (!old) continue;
    const fields = fieldChanges(old, n);
    if (fields.length) changed.push({ id: n.id, kind: n.kind, fields });
  }
  const beforeEdges = new Set(from.edges.map(edgeKey));
  const afterEdges = new Set(to.edges.map(edgeKey));
  return {
    added,
    removed,
    changed,
    edgesAdded: to.edges.filter((e) => !beforeEdges.has(edgeKey(e))),
    edgesRemoved: from.edges.filter((e) => !afterEdges.has(edgeKey(e))),
  };
}

function fieldChanges(a: GraphNode, b: GraphNode): GraphDiff["changed"][number]["fields"] {
  const out: GraphDiff["changed"][number]["fields"] = [];
  if (a.kind !== b.kind) out.push({ field: "kind", from: a.kind, to: b.kind });
  if ((a.name ?? null) !== (b.name ?? null)) out.push({ field: "name", from: a.name ?? null, to: b.name ?? null });
  const ca = (a.config ?? {}) as Record<string, unknown>;
  const cb = (b.config ?? {}) as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(ca), ...Object.keys(cb)])].sort()) {
    if (canonicalJson(ca[key] ?? null) !== canonicalJson(cb[key] ?? null)) out.push({ field: `config.${key}`, from: ca[key] ?? null, to: cb[key] ?? null });
  }
  return out;
}

export function isEmptyDiff(d: GraphDiff): boolean {
  return !d.added.length && !d.removed.length && !d.changed.length && !d.edgesAdded.length && !d.edgesRemoved.length;
}
