import { z } from "zod";
import { InvalidGraphError } from "../errors";
import { templateProblems } from "../templates/render";
import { isValidZone, waitRuleSchema } from "../timers/schedule";

/**
 * A published version's graph. Node ids are stable, human-readable slugs: they name steps in the database and in
 * migrations, so they are never regenerated. Graphs may loop; each visit of a node is a new iteration.
 */

const nodeId = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,62}$/, "node ids are lowercase slugs: a letter, then letters, digits or _");

/** A path into the run's context: `input.plan`, `steps.fetch_profile.output.status`. */
const contextPath = z.string().regex(/^(input|steps)(\.[A-Za-z0-9_-]+)*$/, "a path starting with input. or steps.");

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export type Condition =
  | { path: string; op: "eq" | "neq"; value: z.infer<typeof scalar> }
  | { path: string; op: "gt" | "gte" | "lt" | "lte"; value: number }
  | { path: string; op: "exists" | "truthy" }
  | { path: string; op: "in"; value: z.infer<typeof scalar>[] }
  | { path: string; op: "contains"; value: string }
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition };

export const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    z.object({ path: contextPath, op: z.enum(["eq", "neq"]), value: scalar }).strict(),
    z.object({ path: contextPath, op: z.enum(["gt", "gte", "lt", "lte"]), value: z.number() }).strict(),
    z.object({ path: contextPath, op: z.enum(["exists", "truthy"]) }).strict(),
    z.object({ path: contextPath, op: z.literal("in"), value: z.array(scalar) }).strict(),
    z.object({ path: contextPath, op: z.literal("contains"), value: z.string() }).strict(),
    z.object({ all: z.array(conditionSchema).min(1) }).strict(),
    z.object({ any: z.array(conditionSchema).min(1) }).strict(),
    z.object({ not: conditionSchema }).strict(),
  ]),
);

/** Where the editor drew the node (layout only: ignored by the engine and by version diffs). */
const position = z.object({ x: z.number().finite(), y: z.number().finite() }).strict();
const base = { id: nodeId, name: z.string().max(200).optional(), position: position.optional() };

export const triggerConfig = z
  .object({
    /** Dotted path into the JSON body naming the provider's event id; used when no webhook-id header is sent. */
    eventIdField: z.string().min(1).max(200).optional(),
    /** Fall back to a hash of the payload: two identical submissions then collapse into one run. */
    payloadHashFallback: z.boolean().default(false),
    /** Dotted path to the contact's email in the body: the run's contact is resolved (or created) from it. */
    contactEmailField: z.string().min(1).max(200).default("email"),
    /** Dotted path to the contact's IANA time zone, kept on a new contact. */
    contactTimeZoneField: z.string().min(1).max(200).optional(),
  })
  .strict();

export const httpRequestConfig = z
  .object({
    url: z.string().url().refine((u) => /^https?:/.test(u), "only http and https URLs"),
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("POST"),
    headers: z.record(z.string(), z.string()).default({}),
    /** Literal JSON body; when `sendInput` is true the body is `{ input, body }`. */
    body: z.unknown().optional(),
    sendInput: z.boolean().default(false),
    timeoutMs: z.number().int().min(100).max(300_000).default(10_000),
    maxAttempts: z.number().int().min(1).max(20).optional(),
    /**
     * The target honours Idempotency-Key (a repeat with the same key returns the first result), so a call whose
     * outcome is unknown may be re-sent. false: an uncertain call is parked for a person (needs_review).
     */
    idempotent: z.boolean().default(true),
  })
  .strict();

/**
 * An email through the organisation's SMTP connection. `to`, `subject`, `text` and `html` are templates over the
 * run's input, its contact and earlier steps' outputs (`{{contact.email}}`, `{{steps.draft.output.text}}`); the
 * HTML body is escaped. Consent and the suppression list are checked when the step runs, not when the run starts.
 */
export const sendEmailConfig = z
  .object({
    /** The name of an SMTP connection of the organisation (Settings -> Connections). */
    connection: z.string().min(1).max(100),
    to: z.string().min(1).max(500).default("{{contact.email}}"),
    subject: z.string().min(1).max(1_000),
    text: z.string().max(100_000).optional(),
    html: z.string().max(200_000).optional(),
    /** true: only contacts whose consent is "granted" are written to; otherwise anyone not withdrawn or suppressed. */
    requireConsent: z.boolean().default(false),
    maxAttempts: z.number().int().min(1).max(20).optional(),
  })
  .strict()
  .refine((c) => c.text !== undefined || c.html !== undefined, { message: "an email needs a text or an html body" });
export type SendEmailConfig = z.infer<typeof sendEmailConfig>;

/** Upserts a CRM record whose external id is the effect key; field values are templates. */
export const crmUpsertConfig = z
  .object({
    connection: z.string().min(1).max(100),
    object: z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, "a CRM object name: lowercase letters, digits, _"),
    fields: z.record(z.string().min(1).max(100), z.string().max(10_000)).refine((f) => Object.keys(f).length > 0, "at least one field"),
    maxAttempts: z.number().int().min(1).max(20).optional(),
  })
  .strict();

/** Drafts text with the organisation's model endpoint; at most 2 attempts (each one costs). */
export const modelDraftConfig = z
  .object({
    connection: z.string().min(1).max(100),
    prompt: z.string().min(1).max(50_000),
    system: z.string().max(20_000).optional(),
    maxTokens: z.number().int().min(1).max(32_000).default(800),
    temperature: z.number().min(0).max(2).optional(),
    maxAttempts: z.number().int().min(1).max(2).optional(),
  })
  .strict();

/**
 * Waits for a reply to the email sent by `replyTo` (a send_email node earlier in the graph), until `timeoutSeconds`
 * pass. Two outgoing edges: "reply" (a reply arrived first) and "timeout" (the deadline came first). Exactly one wins.
 */
export const waitForReplyConfig = z
  .object({
    replyTo: nodeId,
    timeoutSeconds: z.number().int().min(1).max(90 * 86_400),
  })
  .strict();

/** Who may decide: named users (by email) and/or everyone holding a role (an owner may always decide). */
export const approversSchema = z
  .object({
    users: z.array(z.string().email().max(320).transform((e) => e.toLowerCase())).max(50).default([]),
    role: z.enum(["owner", "editor", "approver"]).optional(),
  })
  .strict()
  .refine((a) => a.users.length > 0 || a.role !== undefined, { message: "name at least one approver or a role" });
export type Approvers = z.infer<typeof approversSchema>;

const decisionSchema = z.enum(["approved", "rejected"]);
export type Decision = z.infer<typeof decisionSchema>;

/** What happens when an approval's deadline passes with no decision. */
export const onDeadlineSchema = z.discriminatedUnion("action", [
  /** Ask other people, with a deadline of their own; when that passes too, `afterwards` applies. */
  z
    .object({
      action: z.literal("escalate"),
      to: approversSchema,
      deadlineSeconds: z.number().int().min(1).max(30 * 86_400),
      afterwards: z.union([decisionSchema, z.literal("stop")]).default("stop"),
    })
    .strict(),
  /** Take this decision in everyone's name ("decided by the deadline"). */
  z.object({ action: z.literal("default"), decision: decisionSchema }).strict(),
  /** Stop the run with a visible reason. */
  z.object({ action: z.literal("stop") }).strict(),
]);
export type OnDeadline = z.infer<typeof onDeadlineSchema>;

/**
 * Asks a person to approve exact content (`content`, a template over earlier steps' outputs such as a drafted email)
 * before the run goes on. The decision binds the content's digest. Posted to Slack when `slack` is set, and always
 * listed in the approvals inbox. Two outgoing edges: "approved" and "rejected".
 */
export const approvalConfig = z
  .object({
    approvers: approversSchema,
    title: z.string().min(1).max(300),
    content: z.string().min(1).max(50_000),
    deadlineSeconds: z.number().int().min(1).max(30 * 86_400),
    onDeadline: onDeadlineSchema.default({ action: "stop" }),
    /** A Slack connection of the organisation and the channel (C...) or user (U...) to post to. */
    slack: z.object({ connection: z.string().min(1).max(100), channel: z.string().min(1).max(100) }).strict().optional(),
  })
  .strict();
export type ApprovalConfig = z.infer<typeof approvalConfig>;

export const notAZone = (zone: string) => `"${zone}" is not a time zone (use an IANA name such as Europe/Berlin)`;
const ianaZone = z.string().refine(isValidZone, { error: (issue) => notAZone(String(issue.input)) });

export const waitConfig = z
  .object({
    rule: waitRuleSchema,
    /** A fixed IANA zone; also the fallback when `zoneFrom` finds no valid zone on the run. */
    zone: ianaZone.optional(),
    /** Where the contact's zone is on the run: a dotted path into the input, e.g. "input.contact.timezone". */
    zoneFrom: z.string().regex(/^input(\.[A-Za-z0-9_-]+)+$/, "a path starting with input.").optional(),
    /** Deterministic spread for human schedules: hash(run id) mod spreadSeconds. 0 = off. */
    spreadSeconds: z.number().int().min(0).max(86_400).default(0),
  })
  .strict()
  .refine((c) => c.rule.kind === "duration" || c.zone !== undefined || c.zoneFrom !== undefined, {
    message: "a calendar wait needs a zone or zoneFrom",
  });
export type WaitConfig = z.infer<typeof waitConfig>;

export const graphNodeSchema = z.discriminatedUnion("kind", [
  z.object({ ...base, kind: z.literal("trigger"), config: triggerConfig.default({ payloadHashFallback: false, contactEmailField: "email" }) }).strict(),
  z.object({ ...base, kind: z.literal("branch"), config: z.object({ condition: conditionSchema }).strict() }).strict(),
  z.object({ ...base, kind: z.literal("http_request"), config: httpRequestConfig }).strict(),
  z.object({ ...base, kind: z.literal("wait"), config: waitConfig }).strict(),
  z.object({ ...base, kind: z.literal("send_email"), config: sendEmailConfig }).strict(),
  z.object({ ...base, kind: z.literal("crm_upsert"), config: crmUpsertConfig }).strict(),
  z.object({ ...base, kind: z.literal("model_draft"), config: modelDraftConfig }).strict(),
  z.object({ ...base, kind: z.literal("wait_for_reply"), config: waitForReplyConfig }).strict(),
  z.object({ ...base, kind: z.literal("approval"), config: approvalConfig }).strict(),
  z.object({ ...base, kind: z.literal("end"), config: z.object({}).strict().default({}) }).strict(),
]);

export const graphEdgeSchema = z
  .object({
    from: nodeId,
    to: nodeId,
    /** Branch outputs are labelled "true" or "false"; a reply wait's "reply" or "timeout"; an approval's "approved" or "rejected". */
    label: z.enum(["true", "false", "reply", "timeout", "approved", "rejected"]).optional(),
  })
  .strict();

export const graphSchema = z
  .object({
    nodes: z.array(graphNodeSchema).min(2).max(500),
    edges: z.array(graphEdgeSchema).max(2000),
  })
  .strict();

export type Graph = z.infer<typeof graphSchema>;
export type GraphNode = z.infer<typeof graphNodeSchema>;
export type GraphEdge = z.infer<typeof graphEdgeSchema>;
export type HttpRequestConfig = z.infer<typeof httpRequestConfig>;
export type TriggerConfig = z.infer<typeof triggerConfig>;

/** Said by graphProblems and by versions/checks.ts (which says it even when other rules fail). */
export const unreachable = "nothing leads to this step from the trigger";

export interface GraphProblem {
  path: string;
  message: string;
}

/**
 * Every config field rendered as a template when the step runs (the connectors' and approvals/request.ts's
 * renderTemplate calls), as [field path under config, template].
 */
export function templateFields(node: GraphNode): [string, string][] {
  const fields: [string, string | undefined][] =
    node.kind === "send_email"
      ? (["to", "subject", "text", "html"] as const).map((f) => [f, node.config[f]])
      : node.kind === "crm_upsert"
        ? Object.entries(node.config.fields).map(([f, t]) => [`fields.${f}`, t])
        : node.kind === "model_draft"
          ? [
              ["prompt", node.config.prompt],
              ["system", node.config.system],
            ]
          : node.kind === "approval"
            ? [
                ["title", node.config.title],
                ["content", node.config.content],
              ]
            : [];
  return fields.filter((f): f is [string, string] => f[1] !== undefined);
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
    const edges = out.get(node.id) ?? [];
    if (node.kind === "end") {
      if (edges.length) problems.push({ path: `node:${node.id}`, message: "an end node has no outgoing edges" });
    } else if (node.kind === "branch") {
      const labels = edges.map((e) => e.label).sort();
      if (labels.join(",") !== "false,true")
        problems.push({ path: `node:${node.id}`, message: 'a branch needs exactly one "true" and one "false" edge' });
    } else if (node.kind === "wait_for_reply") {
      const labels = edges.map((e) => e.label).sort();
      if (labels.join(",") !== "reply,timeout")
        problems.push({ path: `node:${node.id}`, message: 'a reply wait needs exactly one "reply" and one "timeout" edge' });
      if (byId.get(node.config.replyTo)?.kind !== "send_email")
        problems.push({ path: `node:${node.id}.config.replyTo`, message: `"${node.config.replyTo}" is not a send_email node of this graph` });
    } else if (node.kind === "approval") {
      const labels = edges.map((e) => e.label).sort();
      if (labels.join(",") !== "approved,rejected")
        problems.push({ path: `node:${node.id}`, message: 'an approval needs exactly one "approved" and one "rejected" edge' });
    } else {
      if (edges.length !== 1) problems.push({ path: `node:${node.id}`, message: `needs exactly one outgoing edge, has ${edges.length}` });
      if (edges.some((e) => e.label)) problems.push({ path: `node:${node.id}`, message: "only branch edges carry labels" });
    }
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
  const ends = graph.nodes.filter((n) => n.kind === "end").map((n) => n.id);
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
