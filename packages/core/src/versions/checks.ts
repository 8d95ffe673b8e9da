import type { Db, Tx } from "@holdfast/db";
import { underBaseUrl } from "./connection-kinds/http";
import { connectionFieldsOf } from "./kinds/kind";
import { flowOf } from "./kinds/flow";
import { kindOf } from "./kinds/registry";
import { budgetsOf } from "../store/sql/budgets";
import { connectionsListKinds } from "../store/sql/connections";
import { membershipsListEmails } from "../store/sql/memberships";
import { organisationsSlugById } from "../store/sql/organisations";
import { templateReferences, unescapedOutputs } from "../base/templates/render";
import { type Approvers, type Graph, type GraphNode, type GraphProblem, templateFields, unreachable } from "./graph";

/**
 * Publish checks for what would fail at run time although the graph's shape and structure are fine: a step nothing
 * reaches, a template reading a step that may not have run or writing text unescaped, a recipient that is no address, and (against the
 * organisation) connections that are missing or of the wrong kind and approvers who are not members. Zones are
 * checked by the wait's schema (versions/graph.ts). Messages are sentences for the person editing the graph.
 */

/** The pure checks: no database. */
export function runtimeProblems(graph: Graph): GraphProblem[] {
  const flow = flowOf(graph);
  const problems: GraphProblem[] = unescapedProblems(graph);
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
  }
  return problems;
}

/**
 * Raw output (`{{{x}}}`, `{{& x}}`) in any template field: refused, though rendering escapes it anyway (an HTML body
 * must never carry a contact's own markup, and a template should not say it might). Not in graphProblems: versions
 * published before this rule still load and run, escaped.
 */
function unescapedProblems(graph: Graph): GraphProblem[] {
  const problems: GraphProblem[] = [];
  for (const node of graph.nodes) {
    for (const [field, template] of templateFields(node)) {
      for (const { written, instead } of unescapedOutputs(template)) {
        const how = written.replace(/^\{\{~?/, "").startsWith("&") ? 'uses "{{&", which inserts' : "uses triple braces, which insert";
        problems.push({
          path: `node:${node.id}.config.${field}`,
          message: `${written} ${how} text without escaping it, so a contact could put their own HTML or links into your email or message. Use ${instead}: it is shown exactly as typed.`,
        });
      }
    }
  }
  return problems;
}

const kindWords: Record<string, string> = { smtp: "an SMTP", crm: "a CRM", model: "an AI model", slack: "a Slack", http: "an HTTP API" };

/** The checks against the organisation (read-only): its connections and its members. */
export async function orgProblems(tx: Db | Tx, orgId: string, graph: Graph): Promise<GraphProblem[]> {
  const [connections, members] = await Promise.all([connectionsListKinds(tx, orgId), membershipsListEmails(tx, orgId)]);
  const kindOfConnection = new Map<string, string>(connections.map((c) => [c.name, c.kind]));
  const configOf = new Map<string, unknown>(connections.map((c) => [c.name, c.config]));
  const memberEmails = new Set(members.map((m) => m.email));
  const problems: GraphProblem[] = [];
  const approvers = (node: GraphNode, field: string, a: Approvers) => {
    for (const user of a.users) {
      if (!memberEmails.has(user)) problems.push({ path: `node:${node.id}.config.${field}`, message: `"${user}" is not a member of this organisation` });
    }
  };
  for (const node of graph.nodes) {
    const module = kindOf(node.kind);
    if (!module) continue;
    // Every connection a node names (its fields with a connection widget): present, and of the kind the field wants.
    for (const c of connectionFieldsOf(module, node.config)) {
      const kind = kindOfConnection.get(c.name);
      const path = `node:${node.id}.config.${c.field}`;
      if (kind === undefined) {
        problems.push({ path, message: `there is no connection named "${c.name}" in this organisation; add it in Settings -> Connections or pick another` });
      } else if (kind !== c.kind) {
        problems.push({ path, message: `"${c.name}" is ${kindWords[kind] ?? kind} connection; this step needs ${kindWords[c.kind] ?? c.kind} connection` });
      }
    }
    // An HTTP API credential only goes to addresses under its connection's base URL (the connector refuses otherwise).
    if (node.kind === "http_request" && node.config.connection && kindOfConnection.get(node.config.connection) === "http") {
      const baseUrl = (configOf.get(node.config.connection) as { baseUrl?: unknown } | undefined)?.baseUrl;
      if (typeof baseUrl !== "string" || !underBaseUrl(node.config.url, baseUrl)) {
        problems.push({
          path: `node:${node.id}.config.url`,
          message:
            typeof baseUrl === "string"
              ? `"${node.config.connection}" only sends its credential to addresses under ${baseUrl}: use an address there, or another connection`
              : `"${node.config.connection}" has no base URL: add it in Settings -> Connections, so its credential is only sent there`,
        });
      }
    }
    if (node.kind === "approval") {
      approvers(node, "approvers.users", node.config.approvers);
      if (node.config.onDeadline.action === "escalate") approvers(node, "onDeadline.to.users", node.config.onDeadline.to);
    }
  }
  problems.push(...(await budgetProblems(tx, orgId, graph, configOf)));
  return problems;
}

const dollars = (micros: number) => `$${(micros / 1e6).toFixed(2)}`;

/**
 * A graph with a Draft (AI model) step while the organisation's model budget is not set or cannot cover one more
 * draft: every run would wait at that step. A problem (publishing waits too), on the first Draft step, with the
 * place to fix it: a budget raised in Settings resumes the steps waiting on it.
 */
async function budgetProblems(tx: Db | Tx, orgId: string, graph: Graph, configOf: Map<string, unknown>): Promise<GraphProblem[]> {
  const drafts = graph.nodes.filter((n): n is Extract<GraphNode, { kind: "model_draft" }> => n.kind === "model_draft");
  const first = drafts[0];
  if (!first) return [];
  const [budget, slug] = await Promise.all([budgetsOf(tx, orgId), organisationsSlugById(tx, orgId)]);
  const href = `/settings${slug ? `?org=${encodeURIComponent(slug)}` : ""}#model-budget`;
  const path = `node:${first.id}`;
  if (!budget) {
    return [{ path, href, message: "The model budget is not set: Draft steps will wait. Set one in Settings -> Model budget." }];
  }
  // One draft's worst case: its longest answer at the connection's output price (at least a cent).
  const worst = Math.max(
    10_000,
    ...drafts.map((n) => {
      const price = (configOf.get(n.config.connection) as { outputMicrosPerMTok?: unknown } | undefined)?.outputMicrosPerMTok;
      return typeof price === "number" ? (n.config.maxTokens * price) / 1e6 : 0;
    }),
  );
  const left = budget.allowedMicros - budget.reservedMicros - budget.spentMicros;
  if (left >= worst) return [];
  return [
    {
      path,
      href,
      message: `The model budget is used up (${dollars(Math.max(0, left))} of ${dollars(budget.allowedMicros)} left this month): Draft steps will wait. Raise it in Settings -> Model budget.`,
    },
  ];
}
