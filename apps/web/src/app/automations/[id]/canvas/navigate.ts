import type { Edge } from "@xyflow/react";
import { nodeSize } from "../../layout-graph";

interface Placed {
  id: string;
  position: { x: number; y: number };
}

/**
 * Arrow keys on the canvas walk the journey: Down to the next step (the leftmost when there are several), Up to the
 * step before, Left and Right to the nearest step beside it on the same layer. Pure; null when there is none.
 */
export function neighbour(nodes: Placed[], edges: Edge[], from: string, key: string): string | null {
  const at = nodes.find((n) => n.id === from);
  if (!at) return null;
  const byX = (ids: string[]) =>
    ids
      .map((id) => nodes.find((n) => n.id === id))
      .filter((n): n is Placed => !!n)
      .sort((a, b) => a.position.x - b.position.x)[0]?.id ?? null;
  if (key === "ArrowDown") return byX(edges.filter((e) => e.source === from).map((e) => e.target));
  if (key === "ArrowUp") return byX(edges.filter((e) => e.target === from).map((e) => e.source));
  if (key !== "ArrowLeft" && key !== "ArrowRight") return null;
  const sign = key === "ArrowRight" ? 1 : -1;
  const beside = nodes
    .filter((n) => n.id !== from && Math.abs(n.position.y - at.position.y) < nodeSize.height && sign * (n.position.x - at.position.x) > 0)
    .sort((a, b) => sign * (a.position.x - b.position.x));
  return beside[0]?.id ?? null;
}
