import dagre from "@dagrejs/dagre";

/**
 * Where nodes go on the canvas. Pure: positions in, positions out. Node boxes are this size (.step-node's width and
 * height in globals.css say the same).
 */
export const nodeSize = { width: 240, height: 62 };
/** A step with labelled outputs (approved / rejected) is taller: their names sit in a row above their handles. */
export const outputsRowPx = 14;
export const heightOf = (labelledOutputs: boolean) => nodeSize.height + (labelledOutputs ? outputsRowPx : 0);

/** A step's title is this many px (.step-title's font-size); the canvas never zooms out below a readable 12 px title. */
export const titleFontPx = 16;
export const readableMinZoom = 12 / titleFontPx;
/** The gap between two layers: room for an arrow and the "+" that inserts a step. */
const ranksep = 48;

interface Placed {
  id: string;
  position: { x: number; y: number };
}

/**
 * Top-to-bottom layered layout (dagre), the trigger first, as journey tools draw: one click tidies any drawing. The
 * gap between layers leaves room for the outputs' labels under a step.
 */
export function tidyLayout(
  nodes: { id: string }[],
  edges: { source: string; target: string; sourceHandle?: string | null }[],
  outputOrder: (id: string) => (string | null)[] = () => [],
): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 36, ranksep, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  // The first output's branch (approved, true, reply) goes on the left, under its handle. dagre has no ports; among
  // layouts without crossings it puts the branch whose edge was added last on the left (apps/web/test/
  // editor-canvas.test.ts checks it), so each step's outputs are added in reverse order.
  const rank = (e: { source: string; sourceHandle?: string | null }) => outputOrder(e.source).indexOf(e.sourceHandle ?? null);
  const sorted = [...edges].sort((a, b) => rank(b) - rank(a));
  const ids = new Set(nodes.map((n) => n.id));
  const order: string[] = [];
  const seen = new Set<string>();
  const roots = nodes.filter((n) => !edges.some((e) => e.target === n.id && ids.has(e.source))).map((n) => n.id);
  for (const queue = [...roots, ...nodes.map((n) => n.id)]; queue.length; ) {
    const id = queue.shift() as string;
    if (seen.has(id) || !ids.has(id)) continue;
    seen.add(id);
    order.push(id);
    queue.unshift(...sorted.filter((e) => e.source === id).map((e) => e.target));
  }
  for (const id of order) g.setNode(id, { width: nodeSize.width, height: heightOf(outputOrder(id).filter(Boolean).length > 1) });
  for (const e of sorted) if (g.hasNode(e.source) && g.hasNode(e.target)) g.setEdge(e.source, e.target, {}, `${e.source}:${e.sourceHandle ?? ""}`);
  dagre.layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const p = g.node(n.id) as { x: number; y: number; height: number } | undefined;
    // dagre gives centres; the canvas places nodes by their top-left corner.
    if (p) out.set(n.id, { x: Math.round(p.x - nodeSize.width / 2), y: Math.round(p.y - p.height / 2) });
  }
  return out;
}

const overlaps = (a: { x: number; y: number }, b: { x: number; y: number }) =>
  Math.abs(a.x - b.x) < nodeSize.width + 20 && Math.abs(a.y - b.y) < nodeSize.height + 20;

/**
 * Where a new node lands: below `after` (the selected node) when there is one, else below everything; moved right
 * until it covers no other node.
 */
export function placeNew(nodes: Placed[], after: Placed | undefined): { x: number; y: number } {
  const start = after
    ? { x: after.position.x, y: after.position.y + nodeSize.height + ranksep }
    : { x: nodes[0]?.position.x ?? 40, y: nodes.length ? Math.max(...nodes.map((n) => n.position.y)) + nodeSize.height + ranksep : 40 };
  const spot = { ...start };
  while (nodes.some((n) => overlaps(n.position, spot))) spot.x += nodeSize.width + 36;
  return spot;
}

/** How far to move copied steps so that none covers a step already there: right of them, in steps of one column. */
export function freeOffset(existing: Placed[], copies: { x: number; y: number }[]): { x: number; y: number } {
  for (let k = 1; ; k++) {
    const offset = { x: k * (nodeSize.width + 40), y: 24 };
    if (!copies.some((c) => existing.some((n) => overlaps(n.position, { x: c.x + offset.x, y: c.y + offset.y })))) return offset;
  }
}

/** The box around some nodes, in flow coordinates. */
export function boundsOf(nodes: Placed[]): { x: number; y: number; width: number; height: number } {
  const xs = nodes.map((n) => n.position.x);
  const ys = nodes.map((n) => n.position.y);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) + nodeSize.width - x, height: Math.max(...ys) + nodeSize.height - y };
}

/**
 * The view that shows the graph in a canvas of `box` px: all of it when that is readable, else at the readable
 * minimum from the top (the trigger) and centred, or from the left when wider than the canvas; the rest scrolls.
 */
export function fitReadable(
  bounds: { x: number; y: number; width: number; height: number },
  box: { width: number; height: number },
  padding = 12,
): { x: number; y: number; zoom: number } {
  const fit = Math.min((box.width - 2 * padding) / bounds.width, (box.height - 2 * padding) / bounds.height);
  const zoom = Math.max(readableMinZoom, Math.min(1, fit));
  const w = bounds.width * zoom;
  const h = bounds.height * zoom;
  const x = w <= box.width - 2 * padding ? (box.width - w) / 2 - bounds.x * zoom : padding - bounds.x * zoom;
  const y = h <= box.height - 2 * padding ? (box.height - h) / 2 - bounds.y * zoom : padding - bounds.y * zoom;
  return { x, y, zoom };
}

/** One layer of the layout: a step and the gap under it. */
export const layerStep = nodeSize.height + ranksep;

/**
 * Room for a step put in at `at`: every step at or below that height (of `only`, when given: the steps after it)
 * moves one layer down, so an insertion in a top-to-bottom journey pushes the rest down instead of covering it.
 */
export function makeRoom<T extends Placed>(nodes: T[], at: { y: number }, only?: ReadonlySet<string>): T[] {
  return nodes.map((n) =>
    n.position.y >= at.y - nodeSize.height / 2 && (!only || only.has(n.id)) ? { ...n, position: { x: n.position.x, y: n.position.y + layerStep } } : n,
  );
}

/** The steps reachable from `from` (itself included): what moves down when a step goes in above it. */
export function downstream(from: string, edges: { source: string; target: string }[]): Set<string> {
  const out = new Set<string>([from]);
  for (const queue = [from]; queue.length; ) {
    const id = queue.shift() as string;
    for (const e of edges) {
      if (e.source !== id || out.has(e.target)) continue;
      out.add(e.target);
      queue.push(e.target);
    }
  }
  return out;
}
