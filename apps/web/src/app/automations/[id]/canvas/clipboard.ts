import type { Edge } from "@xyflow/react";
import { newNodeId } from "../../kinds";
import { renameReferences } from "../../rename";
import { edgeOf, type FlowNode } from "./graph-model";

/**
 * Copy, paste and duplicate. Pure: a snippet holds copied steps and the edges among them; pasting gives every step a
 * new id and rewrites the references between copied steps to the new ids, offset so the copy covers nothing.
 */
export interface Snippet {
  nodes: { id: string; kind: string; name?: string; config: unknown; position: { x: number; y: number } }[];
  edges: { from: string; to: string; label?: string }[];
}

export function copySteps(nodes: FlowNode[], edges: Edge[], ids: ReadonlySet<string>): Snippet | null {
  // A trigger starts the automation: there is one, so it is never copied.
  const picked = nodes.filter((n) => ids.has(n.id) && n.data.kind !== "trigger");
  if (picked.length === 0) return null;
  const kept = new Set(picked.map((n) => n.id));
  return {
    nodes: picked.map((n) => ({
      id: n.id,
      kind: n.data.kind,
      ...(n.data.name ? { name: n.data.name } : {}),
      config: structuredClone(n.data.config),
      position: { ...n.position },
    })),
    edges: edges.filter((e) => kept.has(e.source) && kept.has(e.target)).map((e) => ({ from: e.source, to: e.target, ...(e.sourceHandle ? { label: e.sourceHandle } : {}) })),
  };
}

export function pasteSteps(
  snippet: Snippet,
  taken: ReadonlySet<string>,
  reserved: ReadonlySet<string>,
  offset: { x: number; y: number },
): { nodes: FlowNode[]; edges: Edge[]; ids: Map<string, string> } {
  const used = new Set(taken);
  const ids = new Map<string, string>();
  for (const n of snippet.nodes) {
    const id = newNodeId(n.kind, used, reserved);
    used.add(id);
    ids.set(n.id, id);
  }
  const nodes: FlowNode[] = snippet.nodes.map((n) => {
    let config = structuredClone(n.config);
    // Longest ids first, so renaming "draft" never touches a reference to "draft_2" before its own turn.
    for (const [from, to] of [...ids].sort((a, b) => b[0].length - a[0].length)) config = renameReferences(config, from, `\u0000${to}`).config;
    config = unmark(config);
    return {
      id: ids.get(n.id) as string,
      type: "step",
      position: { x: n.position.x + offset.x, y: n.position.y + offset.y },
      selected: true,
      data: { kind: n.kind, ...(n.name ? { name: `${n.name} (copy)` } : {}), config, problems: [] },
    };
  });
  const edges = snippet.edges.map((e) => edgeOf(ids.get(e.from) as string, ids.get(e.to) as string, e.label));
  return { nodes, edges, ids };
}

/** Renames go through a marked id (\0new) so a new id equal to another old id is not renamed twice; unmark after. */
function unmark(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("\u0000", "");
  if (Array.isArray(value)) return value.map(unmark);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unmark(v)]));
  return value;
}

/** Where a paste lands: right and below the copied steps, further each time the same snippet is pasted again. */
export function pasteOffset(times: number): { x: number; y: number } {
  return { x: 60 * times, y: 110 * times };
}
