/** Reachability and dominators over a graph: which steps run on every path to a node. Pure (the editor uses it too). */

export interface FlowGraph {
  nodes: { id: string; kind: string }[];
  edges: { from: string; to: string }[];
}

export interface Flow {
  ids: Set<string>;
  /** For each node reachable from the trigger, the nodes that run on every path from the trigger to it (itself included). */
  dominators: Map<string, Set<string>>;
}

/** Reachability and dominators over the graph (loops allowed); null without exactly one trigger. */
export function flowOf(graph: FlowGraph): Flow | null {
  const triggers = graph.nodes.filter((n) => n.kind === "trigger");
  const trigger = triggers[0];
  if (triggers.length !== 1 || !trigger) return null;
  const ids = new Set(graph.nodes.map((n) => n.id));
  const edges = graph.edges.filter((e) => ids.has(e.from) && ids.has(e.to));
  const reached = new Set([trigger.id]);
  const todo = [trigger.id];
  while (todo.length) {
    const id = todo.pop() as string;
    for (const e of edges) if (e.from === id && !reached.has(e.to)) (reached.add(e.to), todo.push(e.to));
  }
  const preds = new Map<string, string[]>();
  for (const e of edges) if (reached.has(e.from)) preds.set(e.to, [...(preds.get(e.to) ?? []), e.from]);
  // The classic iteration: start from "everything dominates" and intersect over predecessors until nothing changes.
  const dominators = new Map<string, Set<string>>([...reached].map((id) => [id, id === trigger.id ? new Set([id]) : new Set(reached)]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const id of reached) {
      if (id === trigger.id) continue;
      const next = new Set<string>();
      const [first, ...rest] = (preds.get(id) ?? []).map((p) => dominators.get(p) as Set<string>);
      for (const d of first ?? []) if (rest.every((s) => s.has(d))) next.add(d);
      next.add(id);
      if (next.size !== dominators.get(id)?.size) (dominators.set(id, next), (changed = true));
    }
  }
  return { ids, dominators };
}
