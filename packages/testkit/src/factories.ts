import type { SeededAutomation } from "@holdfast/cli/seed";
import { canonicalJson } from "@holdfast/core/base";
import { automationsLock, automationVersionsInsertPublished, automationVersionsLatest, organisationsEnsure } from "@holdfast/core/store";
import { findOrCreateAutomation, type Graph, parseGraph } from "@holdfast/core/versions";
import { type Db, inTx } from "@holdfast/db";

/** trigger -> n http_request steps in a chain -> end. */
export function httpChainGraph(
  url: string,
  steps: number,
  extra: { maxAttempts?: number; timeoutMs?: number; /** A timer wait of this many seconds after the first call. */ pauseSeconds?: number } = {},
): Graph {
  const { pauseSeconds, ...config } = extra;
  const ids = Array.from({ length: steps }, (_, i) => `call_${i + 1}`);
  const order = pauseSeconds !== undefined ? [ids[0] as string, "pause", ...ids.slice(1)] : ids;
  return parseGraph({
    nodes: [
      { id: "start", kind: "trigger", config: { eventIdField: "id" } },
      ...ids.map((id) => ({ id, kind: "http_request", config: { url, method: "POST", body: { step: id }, ...config } })),
      ...(pauseSeconds !== undefined ? [{ id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: pauseSeconds } } }] : []),
      { id: "finish", kind: "end" },
    ],
    edges: ["start", ...order].map((from, i) => ({ from, to: order[i] ?? "finish" })),
  });
}

/**
 * A published version for a test: the organisation and automation made when missing, the graph as version N+1 (or the
 * newest version read back when it already has this graph). Without Publish's checks, on purpose: tests publish graphs
 * the organisation checks would refuse (a connection added later, an approver who is not a member yet) to see what a
 * run does with them. The seed (`ensurePublished`) publishes through the checks.
 */
export function publish(
  db: Db,
  graph: Graph,
  o: { org?: string; automation?: string; triggerAuth?: "signed" | "url_token" } = {},
): Promise<SeededAutomation> {
  const parsed = parseGraph(graph);
  return inTx(db, async (tx) => {
    const orgId = await organisationsEnsure(tx, o.org ?? "acme", o.org ?? "Acme");
    const automation = await findOrCreateAutomation(tx, { orgId, slug: o.automation ?? "flow", name: o.automation ?? "Flow", triggerAuth: o.triggerAuth ?? "signed" });
    await automationsLock(tx, orgId, automation.id);
    const latest = await automationVersionsLatest(tx, orgId, automation.id);
    if (latest && canonicalJson(latest.graph) === canonicalJson(parsed)) return { orgId, automationId: automation.id, versionId: latest.versionId, version: latest.version };
    const row = await automationVersionsInsertPublished(tx, { orgId, automationId: automation.id, version: (latest?.version ?? 0) + 1, graph: parsed, by: "seed" });
    return { orgId, automationId: automation.id, versionId: row.versionId, version: row.version };
  });
}

/** A graph whose nodes follow one another in the order given (a trigger first, an end last). */
export function lineGraph(...nodes: { id: string; kind: string; name?: string; config?: Record<string, unknown> }[]): Graph {
  return parseGraph({ nodes, edges: nodes.slice(1).map((node, i) => ({ from: (nodes[i] as { id: string }).id, to: node.id })) });
}

/** trigger -> an A/B split "pick" with `paths` (label -> weight) -> one end per path ("end_<label lower-cased>"). */
export function splitGraph(paths: Record<string, number>, trigger: Record<string, unknown> = { eventIdField: "id" }): Graph {
  const labels = Object.keys(paths);
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: trigger },
      { id: "pick", kind: "split", config: { paths } },
      ...labels.map((l) => ({ id: `end_${l.toLowerCase()}`, kind: "end" })),
    ],
    edges: [{ from: "t", to: "pick" }, ...labels.map((l) => ({ from: "pick", to: `end_${l.toLowerCase()}`, label: l }))],
  });
}

/** trigger -> end: an automation that only starts runs (trigger tests). `trigger` is the trigger's config. */
export function startOnlyGraph(trigger: Record<string, unknown> = { eventIdField: "id" }): Graph {
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: trigger },
      { id: "e", kind: "end" },
    ],
    edges: [{ from: "t", to: "e" }],
  });
}

/** trigger -> send_email (connection "mail", to the input's email) -> wait_for_reply -> "replied" / "silent" ends. */
export function replyGraph(): Graph {
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "send", kind: "send_email", config: { connection: "mail", subject: "Hi", text: "Hello" } },
      { id: "await_reply", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: 3600 } },
      { id: "replied", kind: "end" },
      { id: "silent", kind: "end" },
    ],
    edges: [
      { from: "t", to: "send" },
      { from: "send", to: "await_reply" },
      { from: "await_reply", to: "replied", label: "reply" },
      { from: "await_reply", to: "silent", label: "timeout" },
    ],
  });
}

/** trigger -> approval (content from the input) -> "approved" / "rejected" ends. */
export function approvalGraph(config: Record<string, unknown> = {}): Graph {
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      {
        id: "review",
        kind: "approval",
        config: {
          approvers: { users: ["sam@acme.test"] },
          title: "Send the follow-up to {{input.email}}?",
          content: "{{input.draft}}",
          deadlineSeconds: 3600,
          ...config,
        },
      },
      { id: "sent", kind: "end" },
      { id: "dropped", kind: "end" },
    ],
    edges: [
      { from: "t", to: "review" },
      { from: "review", to: "sent", label: "approved" },
      { from: "review", to: "dropped", label: "rejected" },
    ],
  });
}

/** Starts a run the way a webhook would (no signature), for tests: its id. */
export async function startTestRun(
  db: Db,
  automation: string,
  body: Record<string, unknown>,
  o: { org?: string; webhookId?: string; wake?: import("@holdfast/core/run").StartOptions["wake"] } = {},
): Promise<string> {
  const { startRun } = await import("@holdfast/core/run");
  const { runId } = await startRun(
    db,
    {
      orgSlug: o.org ?? "acme",
      automationSlug: automation,
      rawBody: "{}",
      body,
      headers: { "webhook-id": o.webhookId ?? null, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
    },
    o.wake ? { wake: o.wake } : {},
  );
  return runId;
}
