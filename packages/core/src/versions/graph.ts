import { z } from "zod";
import { InvalidGraphError } from "../base/errors";
import { friendlyIssue } from "./forms/fields";
import { nodeId } from "./kinds/ids";
import { type GraphProblem, nodeOutputs, templateFieldsOf } from "./kinds/kind";
import { allKinds, type BuiltInNode, edgeLabels, isEdgeLabel, kindOf } from "./kinds/registry";
import { templateProblems } from "../base/templates/render";

/**
 * A published version's graph. Node ids are stable, human-readable slugs: they name steps in the database and in
 * migrations, so they are never regenerated. Graphs may loop; each visit of a node is a new iteration. What a node of
 * each kind may hold is its kind module's (versions/kinds/<kind>.ts); this file holds the graph's own shape and rules.
 */

export { type ApprovalConfig, type Approvers, approversSchema, type Decision, type OnDeadline, onDeadlineSchema } from "./kinds/approval";
export { type Condition, conditionSchema } from "./kinds/branch";
export { crmUpsertConfig } from "./kinds/crm_upsert";
export { type SplitConfig, splitConfig } from "./kinds/split";
export { type HttpRequestConfig, httpRequestConfig } from "./kinds/http_request";
export type { GraphProblem } from "./kinds/kind";
export { modelDraftConfig } from "./kinds/model_draft";
export { type SendEmailConfig, sendEmailConfig } from "./kinds/send_email";
export { type TriggerConfig, triggerConfig } from "./kinds/trigger";
export { notAZone, type WaitConfig, waitConfig } from "./kinds/wait";
export { waitForReplyConfig } from "./kinds/wait_for_reply";

/** Where the editor drew the node (layout only: ignored by the engine and by version diffs). */
const position = z.object({ x: z.number().finite(), y: z.number().finite() }).strict();

/**
 * A node: its kind names a registered kind module, whose schema checks (and fills the defaults of) its config. Issue
 * paths point into the config (`nodes.3.config.to`), and an unknown kind lists the kinds there are.
 */
export const graphNodeSchema = z
  .object({ id: nodeId, name: z.string().max(200).optional(), position: position.optional(), kind: z.string(), config: z.unknown().optional() })
  .strict()
  .transform((node, ctx) => {
    const module = kindOf(node.kind);
    if (!module) {
      ctx.addIssue({
        code: "custom",
        path: ["kind"],
        message: `there is no step kind "${node.kind}"; the kinds are ${allKinds()
          .map((k) => k.kind)
          .join(", ")}`,
      });
      return z.NEVER;
    }
    const parsed = module.config.safeParse(node.config ?? {}, { error: friendlyIssue });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", path: ["config", ...issue.path], message: issue.message });
      return z.NEVER;
    }
    return { ...node, config: parsed.data } as BuiltInNode;
  });

export const graphEdgeSchema = z
  .object({
    from: nodeId,
    to: nodeId,
    /** A labelled output of the node it leaves: a branch's "true"/"false", a reply wait's "reply"/"timeout", ... */
    label: z
      .string()
      .refine((l) => isEdgeLabel(l), { error: (i) => `"${String(i.input)}" is no step's output; outputs are ${edgeLabels().join(", ")}` })
      .optional(),
  })
  .strict();

export const graphSchema = z
  .object({
    nodes: z.array(graphNodeSchema).min(2).max(500),
    edges: z.array(graphEdgeSchema).max(2000),
  })
  .strict();

export type GraphNode = BuiltInNode;
export type GraphEdge = z.infer<typeof graphEdgeSchema>;
export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** Said by graphProblems and by versions/checks.ts (which says it even when other rules fail). */
export const unreachable = "nothing leads to this step from the trigger";


/** Every config field rendered as a template when the step runs, as [field path under config, template]. */
export function templateFields(node: { kind: string; config: unknown }): [string, string][] {
  const module = kindOf(node.kind);
  return module ? templateFieldsOf(module, node.config) : [];
}

/** Structural rules a schema cannot say: one trigger, no dangling edges, branch outputs, reachability. */
export function graphProblems(graph: Graph): GraphProblem[] {
  const problems: GraphProblem[] = [];
  const byId = new Map<string, GraphNode>();
  graph.nodes.forEach((n, i) => {
    if (byId.has(n.id)) problems.push({ path: `nodes.${i}.id`, message: `duplicate node id "${n.id}"` });
    byId.set(n.id, n);
  });
  const triggers = graph.nodes.filter((n) => n.kind === "trigger");
  if (triggers.length !== 1) problems.push({ path: "nodes", message: `exactly one trigger needed, found ${triggers.length}` });

  const out = new Map<string, GraphEdge[]>();
  graph.edges.forEach((e, i) => {
    if (!byId.has(e.from)) problems.push({ path: `edges.${i}.from`, message: `no node "${e.from}"` });
    if (!byId.has(e.to)) problems.push({ path: `edges.${i}.to`, message: `no node "${e.to}"` });
    if (byId.get(e.to)?.kind === "trigger") problems.push({ path: `edges.${i}.to`, message: "nothing may lead into the trigger" });
    out.set(e.from, [...(out.get(e.from) ?? []), e]);
  });

  for (const node of graph.nodes) {
    const module = kindOf(node.kind);
    if (!module) continue;
    const edges = out.get(node.id) ?? [];
    const words = module.label;
    const outputs = nodeOutputs(module, node.config);
    if (outputs === null) {
      if (edges.length !== 1) problems.push({ path: `node:${node.id}`, message: `needs exactly one outgoing edge, has ${edges.length}` });
      if (edges.some((e) => e.label)) problems.push({ path: `node:${node.id}`, message: `the edge out of ${words} carries no label` });
    } else if (outputs.length === 0) {
      if (edges.length) problems.push({ path: `node:${node.id}`, message: `${words} has no outgoing edges` });
    } else {
      const labels = edges.map((e) => e.label ?? "(none)").sort();
      const wanted = [...outputs].sort();
      if (labels.join(",") !== wanted.join(","))
        problems.push({
          path: `node:${node.id}`,
          message: module.outputsFor
            ? `${words} needs exactly one edge for each of its paths (${outputs.map((o) => `"${o}"`).join(", ")}), and no other`
            : `${words} needs exactly one ${outputs.map((o) => `"${o}"`).join(" and one ")} edge`,
        });
    }
    problems.push(...(module.checks?.(node as never, graph) ?? []));
  }
  // Template references that cannot resolve are publish-time errors where they can be detected.
  const ids = new Set(graph.nodes.map((n) => n.id));
  for (const node of graph.nodes) {
    for (const [field, template] of templateFields(node)) {
      for (const message of templateProblems(template, ids)) problems.push({ path: `node:${node.id}.config.${field}`, message });
    }
  }
  if (problems.length) return problems;

  // Every node reachable from the trigger, and every node able to reach an end.
  const reach = (starts: string[], next: (id: string) => string[]) => {
    const seen = new Set(starts);
    const todo = [...starts];
    while (todo.length) for (const n of next(todo.pop() as string)) if (!seen.has(n)) (seen.add(n), todo.push(n));
    return seen;
  };
  const fromTrigger = reach([triggers[0]?.id ?? ""], (id) => (out.get(id) ?? []).map((e) => e.to));
  const ends = graph.nodes.filter((n) => kindOf(n.kind)?.outputs?.length === 0).map((n) => n.id);
  const toEnd = reach(ends, (id) => graph.edges.filter((e) => e.to === id).map((e) => e.from));
  for (const node of graph.nodes) {
    if (!fromTrigger.has(node.id)) problems.push({ path: `node:${node.id}`, message: unreachable });
    else if (!toEnd.has(node.id)) problems.push({ path: `node:${node.id}`, message: "cannot reach an end node" });
  }
  return problems;
}

/** Validates a graph for publishing: the zod shape, then the structural rules. Throws InvalidGraphError. */
export function parseGraph(input: unknown): Graph {
  const parsed = graphSchema.safeParse(input);
  if (!parsed.success) {
    throw new InvalidGraphError(parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })));
  }
  const problems = graphProblems(parsed.data);
  if (problems.length) throw new InvalidGraphError(problems);
  return parsed.data;
}

export function triggerOf(graph: Graph): Extract<GraphNode, { kind: "trigger" }> {
  const t = graph.nodes.find((n) => n.kind === "trigger");
  if (t?.kind !== "trigger") throw new InvalidGraphError([{ path: "nodes", message: "no trigger" }]);
  return t;
}
