import type { Graph } from "@holdfast/core/versions";
import { kindOf } from "@holdfast/core/kinds";

/**
 * The automation's graph as the run went through it: nodes in layers by distance from the trigger, each coloured by
 * its latest step's status; the run's current position (an open step: ready, running, waiting, parked) is ringed.
 * Plain SVG from the server: it renders on every refresh with no client code.
 */
const W = 150;
const H = 44;
const GX = 60;
const GY = 26;

const fill: Record<string, string> = {
  done: "#e5f6ea",
  failed: "#fde8e8",
  cancelled: "#f3ecdf",
  running: "#e6f0ff",
  ready: "#eef0f4",
  waiting: "#fff6e0",
  parked: "#fff0d6",
};

type Point = { x: number; y: number };
const open = new Set(["ready", "running", "waiting", "parked"]);

/** Each node's place: a column per distance from the trigger (breadth first), a row per node in its column. */
function layout(graph: Graph): { pos: Map<string, Point>; width: number; height: number } {
  const trigger = graph.nodes.find((n) => n.kind === "trigger");
  const depth = new Map<string, number>();
  const queue: string[] = trigger ? [trigger.id] : [];
  if (trigger) depth.set(trigger.id, 0);
  while (queue.length) {
    const id = queue.shift() as string;
    for (const e of graph.edges.filter((x) => x.from === id)) {
      if (!depth.has(e.to)) {
        depth.set(e.to, (depth.get(id) ?? 0) + 1);
        queue.push(e.to);
      }
    }
  }
  const layers = new Map<number, string[]>();
  for (const n of graph.nodes) {
    const d = depth.get(n.id) ?? 0;
    layers.set(d, [...(layers.get(d) ?? []), n.id]);
  }
  const pos = new Map<string, Point>();
  for (const [d, ids] of layers) {
    ids.forEach((id, i) => {
      pos.set(id, { x: 10 + d * (W + GX), y: 10 + i * (H + GY) });
    });
  }
  const width = 20 + Math.max(...[...layers.keys()].map((d) => d + 1)) * (W + GX) - GX;
  const height = 20 + Math.max(...[...layers.values()].map((l) => l.length)) * (H + GY) - GY;
  return { pos, width, height };
}

/** `path`: the nodes and edges ("from->to") the run went through (the story's), drawn bold; the rest is dimmed. */
export function GraphView({ graph, latest, path }: { graph: Graph; latest: Map<string, string>; path?: { nodes: string[]; edges: string[] } }) {
  const takenNodes = new Set(path?.nodes ?? []);
  const takenEdges = new Set(path?.edges ?? []);
  const { pos, width, height } = layout(graph);
  return (
    // Shrinks to the page's width down to 70% (a long automation then scrolls sideways in its frame).
    <svg
      className="graph"
      width="100%"
      style={{ maxWidth: width, minWidth: Math.round(width * 0.7) }}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label="the automation's graph with the run's position"
    >
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" fill="#8a93a6" />
        </marker>
        <marker id="arrow-taken" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" fill="#1f5fbf" />
        </marker>
      </defs>
      {graph.edges.map((e, i) => {
        const a = pos.get(e.from);
        const b = pos.get(e.to);
        if (!a || !b) return null;
        // Two outputs into the same step ("reply" and "timeout" both to the CRM): their labels stack, not overlap.
        const twin = graph.edges.slice(0, i).filter((x) => x.from === e.from && x.to === e.to).length;
        const taken = takenEdges.has(`${e.from}->${e.to}`);
        return <GraphEdge key={`${e.from}-${e.to}-${e.label ?? ""}`} edge={e} a={a} b={b} twin={twin} taken={taken} dimmed={!!path && !taken} />;
      })}
      {graph.nodes.map((n) => {
        const p = pos.get(n.id);
        if (!p) return null;
        return <GraphNode key={n.id} node={n} p={p} status={latest.get(n.id)} taken={takenNodes.has(n.id)} dimmed={!!path && !takenNodes.has(n.id)} />;
      })}
    </svg>
  );
}

function GraphEdge({ edge: e, a, b, twin, taken, dimmed }: { edge: Graph["edges"][number]; a: Point; b: Point; twin: number; taken: boolean; dimmed: boolean }) {
  const back = b.x <= a.x;
  const x1 = a.x + W;
  const y1 = a.y + H / 2;
  const x2 = back ? b.x + W / 2 : b.x;
  const y2 = back ? b.y + H : b.y + H / 2;
  const d = back ? `M ${x1} ${y1} C ${x1 + 40} ${y1 + 60}, ${x2} ${y2 + 60}, ${x2} ${y2}` : `M ${x1} ${y1} C ${x1 + GX / 2} ${y1}, ${x2 - GX / 2} ${y2}, ${x2} ${y2}`;
  return (
    <g data-edge={`${e.from}->${e.to}`} data-taken={taken ? "1" : undefined} opacity={dimmed ? 0.45 : 1}>
      <path d={d} fill="none" stroke={taken ? "#1f5fbf" : "#8a93a6"} strokeWidth={taken ? 2.6 : 1.3} markerEnd={taken ? "url(#arrow-taken)" : "url(#arrow)"} />
      {e.label ? (
        <text x={(x1 + x2) / 2} y={(y1 + y2) / 2 - 4 + twin * 14} fontSize="10" fill="#6b7385" textAnchor="middle">
          {e.label}
        </text>
      ) : null}
    </g>
  );
}

/** A node coloured by its latest step's status, ringed when the run is there now. */
function GraphNode({ node: n, p, status, taken, dimmed }: { node: Graph["nodes"][number]; p: Point; status: string | undefined; taken: boolean; dimmed: boolean }) {
  const here = status !== undefined && open.has(status);
  const title = n.name?.trim() || n.id;
  return (
    <g data-node={n.id} data-status={status ?? "none"} data-taken={taken ? "1" : undefined} className={here ? "here" : undefined} opacity={dimmed ? 0.5 : 1}>
      <rect
        x={p.x}
        y={p.y}
        width={W}
        height={H}
        rx="7"
        fill={status ? (fill[status] ?? "#fff") : "#fff"}
        stroke={here || taken ? "#1f5fbf" : "#c9ceda"}
        strokeWidth={here ? 3 : taken ? 1.8 : 1}
      />
      <text x={p.x + 10} y={p.y + 18} fontSize="12" fontWeight="600" fill="#1d2330">
        {title.length > 20 ? `${title.slice(0, 19)}…` : title}
        <title>{n.name ? `${n.name} (${n.id})` : n.id}</title>
      </text>
      <text x={p.x + 10} y={p.y + 34} fontSize="10" fill="#6b7385">
        {kindOf(n.kind)?.label ?? n.kind}
        {status ? ` · ${status}` : ""}
      </text>
    </g>
  );
}
