import { type KindModule, nodeOutputs } from "@holdfast/core/kinds";
import type { Edge, Node } from "@xyflow/react";
import { labelOf } from "../../../forms/step-form";
import { kindInfo } from "../../kinds";

/** The canvas's view of a draft graph, and the way back. Pure. */
export type NodeData = { kind: string; name?: string; config: unknown; problems: string[] };
export type FlowNode = Node<NodeData>;
export interface GraphJson {
  nodes: { id: string; kind: string; name?: string; config?: unknown; position?: { x: number; y: number } }[];
  edges: { from: string; to: string; label?: string }[];
}
export interface Problem {
  path: string;
  message: string;
  /** Where the problem is fixed when it is not in this graph (the model budget: Settings). */
  href?: string;
}

/** One edge on the canvas: its id names source, target and output, so one output holds one edge. */
export function edgeOf(source: string, target: string, handle: string | null | undefined): Edge {
  return {
    id: `${source}->${target}${handle ? `:${handle}` : ""}`,
    source,
    target,
    type: "insertable",
    ...(handle ? { sourceHandle: handle, label: handle } : {}),
  };
}

export function toFlow(graph: GraphJson): { nodes: FlowNode[]; edges: Edge[] } {
  const nodes = graph.nodes.map((n, i) => ({
    id: n.id,
    type: "step",
    position: n.position ?? { x: (i % 4) * 260, y: Math.floor(i / 4) * 140 },
    data: { kind: n.kind, ...(n.name ? { name: n.name } : {}), config: n.config ?? {}, problems: [] },
  }));
  const edges = graph.edges.map((e) => edgeOf(e.from, e.to, e.label));
  return { nodes, edges };
}

export function toGraph(nodes: FlowNode[], edges: Edge[]): GraphJson {
  return {
    nodes: nodes.map((n) => ({
      id: n.id,
      kind: n.data.kind,
      ...(n.data.name ? { name: n.data.name } : {}),
      config: n.data.config,
      position: { x: Math.round(n.position.x), y: Math.round(n.position.y) },
    })),
    edges: edges.map((e) => ({ from: e.source, to: e.target, ...(e.sourceHandle ? { label: e.sourceHandle } : {}) })),
  };
}

/** A problem placed: its node ("(graph)" for the graph's own) and its field under config ("" for the node itself). */
export interface PlacedProblem {
  nodeId: string;
  field: string;
  message: string;
  href?: string;
}

/** Places "node:<id>.config.<field>" paths, and "nodes.<index>.config.<field>" paths of the shape check. */
export function placeProblems(problems: Problem[], graph: GraphJson): PlacedProblem[] {
  return problems.map((p) => {
    const byId = /^node:([a-z][a-z0-9_]*)/.exec(p.path)?.[1];
    const byIndex = /^nodes\.(\d+)/.exec(p.path)?.[1];
    const id = byId ?? (byIndex !== undefined ? graph.nodes[Number(byIndex)]?.id : undefined);
    const rest = p.path.replace(/^node:[a-z0-9_]+\.?|^nodes\.\d+\.?/, "");
    return { nodeId: id ?? "(graph)", field: rest.startsWith("config.") ? rest.slice("config.".length) : rest === "config" ? "" : rest, message: p.message, ...(p.href ? { href: p.href } : {}) };
  });
}

export function problemsByNode(placed: PlacedProblem[], graph: GraphJson): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of placed) {
    const kind = graph.nodes.find((n) => n.id === p.nodeId)?.kind ?? "";
    const words = p.field ? `${labelOf(kindInfo(kind), p.field)}: ${p.message}` : p.message;
    out.set(p.nodeId, [...(out.get(p.nodeId) ?? []), words]);
  }
  return out;
}

/** The node's one line: its kind's summary of a valid config, or what is missing. */
export function summaryOf(module: KindModule | undefined, config: unknown): string {
  if (!module) return "";
  const parsed = module.config.safeParse(config ?? {});
  if (!parsed.success) return "Not set up yet";
  try {
    return module.summary(parsed.data);
  } catch {
    return "";
  }
}

/**
 * A step's outputs as the canvas wires them: labelled ones, [null] for one unlabelled output, [] for an end. An A/B
 * split's are named by its config (one per path); without a config, a new step's (its kind's defaults).
 */
export const outputsOf = (kind: string, config?: unknown): (string | null)[] => {
  const module = kindInfo(kind);
  return module ? (nodeOutputs(module, config ?? module.defaults) ?? [null]) : [null];
};

/** An output in words for "Then" ("When approved, go to"; an A/B split's "Path A: go to"). */
export function outputWords(kind: string, output: string): string {
  const module = kindInfo(kind);
  return module?.outputWords?.[output] ?? (module?.outputsFor ? `Path ${output}: go to` : `When ${output}, go to`);
}
