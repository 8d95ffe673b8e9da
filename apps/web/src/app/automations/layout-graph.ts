import dagre from "@dagrejs/dagre";

/**
 * Where nodes go on the canvas. Pure: positions in, positions out. Node boxes are about this size (see .step-node).
 */
export const nodeSize = { width: 240, height: 96 };

interface Placed {
  id: string;
  position: { x: number; y: number };
}

/** Left-to-right layered layout (dagre), the trigger first: one click tidies any drawing. */
export function tidyLayout(nodes: { id: string }[], edges: { source: string; target: string }[]): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 30, ranksep: 60, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { ...nodeSize });
  for (const e of edges) if (g.hasNode(e.source) && g.hasNode(e.target)) g.setEdge(e.source, e.target);
  dagre.layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const p = g.node(n.id) as { x: number; y: number } | undefined;
    // dagre gives centres; the canvas places nodes by their top-left corner.
    if (p) out.set(n.id, { x: Math.round(p.x - nodeSize.width / 2), y: Math.round(p.y - nodeSize.height / 2) });
  }
  return out;
}

const overlaps = (a: { x: number; y: number }, b: { x: number; y: number }) =>
  Math.abs(a.x - b.x) < nodeSize.width + 20 && Math.abs(a.y - b.y) < nodeSize.height + 20;

/**
 * Where a new node lands: to the right of `after` (the selected node) when there is one, else right of everything;
 * moved down until it covers no other node.
 */
export function placeNew(nodes: Placed[], after: Placed | undefined): { x: number; y: number } {
  const start = after
    ? { x: after.position.x + nodeSize.width + 80, y: after.position.y }
    : { x: nodes.length ? Math.max(...nodes.map((n) => n.position.x)) + nodeSize.width + 80 : 40, y: nodes[0]?.position.y ?? 40 };
  const spot = { ...start };
  while (nodes.some((n) => overlaps(n.position, spot))) spot.y += nodeSize.height + 30;
  return spot;
}
