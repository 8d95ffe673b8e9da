import type { Db, Tx } from "@holdfast/db";
import { z } from "zod";
import { connectors } from "../connectors/registry";
import { type ConnectionKind, connectionsListKinds } from "../sql/connections";
import { membershipsListEmails } from "../sql/memberships";
import { templateReferences } from "../templates/render";
import { type Approvers, type Graph, type GraphNode, type GraphProblem, templateFields, unreachable } from "./graph";

/**
 * Publish checks for what would fail at run time although the graph's shape and structure are fine: a step nothing
 * reaches, a template reading a step that may not have run, a recipient that is no address, and (against the
 * organisation) connections that are missing or of the wrong kind and approvers who are not members. Zones are
 * checked by the wait's schema (versions/graph.ts). Messages are sentences for the person editing the graph.
 */

/** The pure checks: no database. */
export function runtimeProblems(graph: Graph): GraphProblem[] {
  const flow = flowOf(graph);
  const problems: GraphProblem[] = [];
  for (const node of graph.nodes) {
    if (flow && !flow.dominators.has(node.id)) {
      problems.push({ path: `node:${node.id}`, message: unreachable });
      continue;
    }
    for (const [field, template] of templateFields(node)) {
      const seen = new Set<string>();
      for (const ref of templateReferences(template)) {
        const [root, step] = ref.parts;
        // Unknown step ids are graphProblems' to report; dominance needs one trigger (graphProblems again).
        if (root !== "steps" || step === undefined || !flow?.ids.has(step) || seen.has(ref.original)) continue;
        seen.add(ref.original);
        const dominators = flow.dominators.get(node.id);
        const message =
          step === node.id
            ? `{{${ref.original}}} refers to this step itself, which has not finished when it runs`
            : dominators && !dominators.has(step)
              ? `{{${ref.original}}} refers to step "${step}", which does not run on every path to this step`
              : null;
        if (message) problems.push({ path: `node:${node.id}.config.${field}`, message });
      }
    }
    if (node.kind === "send_email" && !node.config.to.includes("{{") && !email.safeParse(node.config.to.trim()).success) {
      problems.push({ path: `node:${node.id}.config.to`, message: `"${node.config.to}" is neither an email address nor a template like {{contact.email}}` });
    }
  }
  return problems;
}

const email = z.email();

interface Flow {
  ids: Set<string>;
  /** For each node reachable from the trigger, the nodes that run on every path from the trigger to it (itself included). */
  dominators: Map<string, Set<string>>;
}

/** Reachability and dominators over the graph (loops allowed); null without exactly one trigger. */
function flowOf(graph: Graph): Flow | null {
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

/** Which kind of connection each node kind's connector needs (connectors/registry.ts), plus an approval's Slack post. */
const connectionKinds = new Map<string, ConnectionKind>(connectors.flatMap((c) => (c.connection ? [[c.kind, c.connection.kind] as const] : [])));

const kindWords: Record<ConnectionKind, string> = { smtp: "an SMTP", crm: "a CRM", model: "a model", slack: "a Slack" };

/** The checks against the organisation (read-only): its connections and its members. */
export async function orgProblems(tx: Db | Tx, orgId: string, graph: Graph): Promise<GraphProblem[]> {
  const [connections, members] = await Promise.all([connectionsListKinds(tx, orgId), membershipsListEmails(tx, orgId)]);
  const kindOf = new Map(connections.map((c) => [c.name, c.kind]));
  const memberEmails = new Set(members.map((m) => m.email));
  const problems: GraphProblem[] = [];
  const connection = (node: GraphNode, field: string, name: string, wanted: ConnectionKind) => {
    const kind = kindOf.get(name);
    const path = `node:${node.id}.config.${field}`;
    if (kind === undefined) {
      problems.push({ path, message: `there is no connection named "${name}" in this organisation; add it in Settings -> Connections or pick another` });
    } else if (kind !== wanted) {
      problems.push({ path, message: `"${name}" is ${kindWords[kind]} connection; this step needs ${kindWords[wanted]} connection` });
    }
  };
  const approvers = (node: GraphNode, field: string, a: Approvers) => {
    for (const user of a.users) {
      if (!memberEmails.has(user)) problems.push({ path: `node:${node.id}.config.${field}`, message: `"${user}" is not a member of this organisation` });
    }
  };
  for (const node of graph.nodes) {
    const wanted = connectionKinds.get(node.kind);
    if (wanted && "connection" in node.config) connection(node, "connection", node.config.connection, wanted);
    if (node.kind === "approval") {
      if (node.config.slack) connection(node, "slack.connection", node.config.slack.connection, "slack");
      approvers(node, "approvers.users", node.config.approvers);
      if (node.config.onDeadline.action === "escalate") approvers(node, "onDeadline.to.users", node.config.onDeadline.to);
    }
  }
  return problems;
}
