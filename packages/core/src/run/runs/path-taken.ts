import type { Story, StoryInput } from "./story-types";

/** The route through the graph, in order: the trigger, each step's node and each branch taken, the end reached. */
export function pathTaken(input: Pick<StoryInput, "graph" | "steps" | "timeline" | "run">): Story["path"] {
  const { graph, steps, timeline } = input;
  if (!graph) return { nodes: [], edges: [] };
  const trigger = graph.nodes.find((n) => n.kind === "trigger");
  // Ties (a branch and the step after it are written in one transaction, at one now()) go in causal order.
  const visits: { nodeId: string; at: number; rank: number }[] = [
    ...(trigger ? [{ nodeId: trigger.id, at: input.run.createdAt.getTime(), rank: 0 }] : []),
    ...timeline.filter((e) => (e.type === "branch.evaluated" || e.type === "split.chosen") && e.nodeId).map((e) => ({ nodeId: e.nodeId as string, at: e.at.getTime(), rank: 1 })),
    ...steps.map((s) => ({ nodeId: s.nodeId, at: s.createdAt.getTime(), rank: 2 })),
    ...timeline.filter((e) => e.type === "run.completed" && e.nodeId).map((e) => ({ nodeId: e.nodeId as string, at: e.at.getTime(), rank: 3 })),
  ].sort((a, b) => a.at - b.at || a.rank - b.rank);
  const nodes: string[] = [];
  const edges: string[] = [];
  for (const v of visits) {
    const prev = nodes.at(-1);
    if (prev === v.nodeId) continue;
    if (prev !== undefined && graph.edges.some((e) => e.from === prev && e.to === v.nodeId)) edges.push(`${prev}->${v.nodeId}`);
    nodes.push(v.nodeId);
  }
  return { nodes, edges };
}
