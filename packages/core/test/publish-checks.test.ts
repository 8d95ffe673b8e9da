import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertMember } from "../src/people/auth/users";
import { createConnection } from "../src/providers/connections/connect";
import { getDraft, InvalidDraftError, publishDraft, saveDraft } from "../src/run/automations/drafts";

/**
 * Publish refuses what would fail at run time: each check on its own graph, with the node and field it names and
 * the sentence it says; a graph using all of them correctly publishes.
 */
let t: TestDatabase;
let orgId = "";
let automationId = "";

beforeAll(async () => {
  t = await createTestDatabase();
  const v1 = await publish(t.db, httpChainGraph("https://crm.example.com/a", 1), { automation: "checks" });
  orgId = v1.orgId;
  automationId = v1.automationId;
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "smtp.example.com", from: "a@acme.test" }, secret: "s" });
  await createConnection(t.db, { orgId, kind: "crm", name: "crm", config: { baseUrl: "https://crm.example.com" }, secret: "s" });
  await createConnection(t.db, { orgId, kind: "model", name: "model", config: { baseUrl: "https://model.example.com" }, secret: "s" });
  await createConnection(t.db, { orgId, kind: "slack", name: "slack", config: {}, secret: "s" });
  await createConnection(t.db, { orgId, kind: "http", name: "billing", config: { header: "X-Api-Key", baseUrl: "https://billing.example.com/v2" }, secret: "k" });
  await upsertMember(t.db, { orgId, email: "Sam@Acme.test", name: "Sam", password: "a long enough password", role: "approver" });
});
afterAll(async () => {
  await t?.drop();
});

type Node = { id: string; kind: string; config?: Record<string, unknown> };
const trigger: Node = { id: "t", kind: "trigger", config: { eventIdField: "id" } };
const end: Node = { id: "done", kind: "end" };
/** trigger -> each node in turn -> end. */
const chain = (...nodes: Node[]) => ({
  nodes: [trigger, ...nodes, end],
  edges: [trigger, ...nodes].map((n, i) => ({ from: n.id, to: (nodes[i] ?? end).id })),
});
const email = (config: Record<string, unknown> = {}): Node => ({
  id: "send",
  kind: "send_email",
  config: { connection: "mail", to: "{{contact.email}}", subject: "Hi", text: "Hello", ...config },
});

async function refusal(graph: unknown): Promise<{ path: string; message: string }[]> {
  const { revision } = await getDraft(t.db, orgId, automationId);
  await saveDraft(t.db, orgId, automationId, graph, revision, "test");
  const error = await publishDraft(t.db, orgId, automationId, "test", "owner").then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidDraftError);
  return (error as InvalidDraftError).problems;
}

describe("publish refuses what would fail at run time", () => {
  it("a connection that does not exist", async () => {
    expect(await refusal(chain(email({ connection: "nope" })))).toEqual([
      {
        path: "node:send.config.connection",
        message: 'there is no connection named "nope" in this organisation; add it in Settings -> Connections or pick another',
      },
    ]);
  });

  it("a connection of the wrong kind (a step's and an approval's Slack post)", async () => {
    const review: Node = {
      id: "review",
      kind: "approval",
      config: { approvers: { role: "approver" }, title: "OK?", content: "x", deadlineSeconds: 60, slack: { connection: "mail", channel: "C1" } },
    };
    const graph = {
      nodes: [trigger, review, email({ connection: "crm" }), end, { id: "dropped", kind: "end" }],
      edges: [
        { from: "t", to: "review" },
        { from: "review", to: "send", label: "approved" },
        { from: "review", to: "dropped", label: "rejected" },
        { from: "send", to: "done" },
      ],
    };
    expect(await refusal(graph)).toEqual([
      { path: "node:review.config.slack.connection", message: '"mail" is an SMTP connection; this step needs a Slack connection' },
      { path: "node:send.config.connection", message: '"crm" is a CRM connection; this step needs an SMTP connection' },
    ]);
  });

  it("a template reading a step that only one branch runs, or the step itself", async () => {
    const graph = {
      nodes: [
        trigger,
        email(),
        { id: "reply", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: 60 } },
        { id: "draft", kind: "model_draft", config: { connection: "model", prompt: "Answer {{steps.reply.output.text}}" } },
        {
          id: "log",
          kind: "crm_upsert",
          config: { connection: "crm", object: "note", fields: { outcome: "{{steps.draft.output.text}}", mine: "{{steps.log.output.id}}", sent: "{{steps.send.output.messageId}}" } },
        },
        end,
      ],
      edges: [
        { from: "t", to: "send" },
        { from: "send", to: "reply" },
        { from: "reply", to: "draft", label: "reply" },
        { from: "reply", to: "log", label: "timeout" },
        { from: "draft", to: "log" },
        { from: "log", to: "done" },
      ],
    };
    // draft runs only on the reply path, so log (reached by both) may not read it; draft itself may read reply.
    expect(await refusal(graph)).toEqual([
      // jsonb keeps an object's keys shortest first.
      { path: "node:log.config.fields.mine", message: "{{steps.log.output.id}} refers to this step itself, which has not finished when it runs" },
      { path: "node:log.config.fields.outcome", message: '{{steps.draft.output.text}} refers to step "draft", which does not run on every path to this step' },
    ]);
  });

  it("a recipient that is neither an address nor a template", async () => {
    expect(await refusal(chain(email({ to: "not an email" })))).toEqual([
      { path: "node:send.config.to", message: '"not an email" is neither an email address nor a template like {{contact.email}}' },
    ]);
    expect(await refusal(chain(email({ to: "a@acme.test, b@acme.test" })))).toEqual([
      { path: "node:send.config.to", message: '"a@acme.test, b@acme.test" is neither an email address nor a template like {{contact.email}}' },
    ]);
  });

  it("an approver who is not a member (named or escalated to)", async () => {
    const review: Node = {
      id: "review",
      kind: "approval",
      config: {
        approvers: { users: ["sam@acme.test", "sam@nowhere.test"] },
        title: "OK?",
        content: "x",
        deadlineSeconds: 60,
        onDeadline: { action: "escalate", to: { users: ["ghost@acme.test"] }, deadlineSeconds: 60 },
      },
    };
    const graph = {
      nodes: [trigger, review, end, { id: "dropped", kind: "end" }],
      edges: [
        { from: "t", to: "review" },
        { from: "review", to: "done", label: "approved" },
        { from: "review", to: "dropped", label: "rejected" },
      ],
    };
    expect(await refusal(graph)).toEqual([
      { path: "node:review.config.approvers.users", message: '"sam@nowhere.test" is not a member of this organisation' },
      { path: "node:review.config.onDeadline.to.users", message: '"ghost@acme.test" is not a member of this organisation' },
    ]);
  });

  it("an invalid time zone", async () => {
    const wait: Node = { id: "pause", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, zone: "Mars/Olympus" } };
    expect(await refusal(chain(wait))).toEqual([
      { path: "node:pause.config.zone", message: '"Mars/Olympus" is not a time zone (use an IANA name such as Europe/Berlin)' },
    ]);
  });

  it("a step nothing leads to, said alongside the other problems", async () => {
    const graph = chain(email({ connection: "nope" }));
    graph.nodes.push({ id: "orphan", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } });
    graph.edges.push({ from: "orphan", to: "done" });
    expect(await refusal(graph)).toEqual([
      { path: "node:orphan", message: "nothing leads to this step from the trigger" },
      {
        path: "node:send.config.connection",
        message: 'there is no connection named "nope" in this organisation; add it in Settings -> Connections or pick another',
      },
    ]);
  });

  it("the editor sees the same problems while editing", async () => {
    const { revision } = await getDraft(t.db, orgId, automationId);
    const draft = await saveDraft(t.db, orgId, automationId, chain(email({ connection: "nope", to: "not an email" })), revision, "test");
    expect(draft.problems.map((p) => p.path)).toEqual(["node:send.config.to", "node:send.config.connection"]);
  });

  it("a graph using every checked field correctly publishes", async () => {
    const graph = {
      nodes: [
        trigger,
        { id: "pause", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, zone: "Europe/Berlin" } },
        email({ to: "team@acme.test", subject: "About {{input.plan}} for {{contact.email}}" }),
        { id: "reply", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: 60 } },
        { id: "draft", kind: "model_draft", config: { connection: "model", prompt: "Answer {{steps.reply.output.text}} to {{steps.send.output.messageId}}" } },
        {
          id: "review",
          kind: "approval",
          config: {
            approvers: { users: ["sam@acme.test"], role: "owner" },
            title: "Send {{steps.draft.output.text}}?",
            content: "{{steps.draft.output.text}}",
            deadlineSeconds: 60,
            slack: { connection: "slack", channel: "C1" },
          },
        },
        { id: "log", kind: "crm_upsert", config: { connection: "crm", object: "note", fields: { sent: "{{steps.send.output.messageId}}" } } },
        end,
      ],
      edges: [
        { from: "t", to: "pause" },
        { from: "pause", to: "send" },
        { from: "send", to: "reply" },
        { from: "reply", to: "draft", label: "reply" },
        { from: "reply", to: "log", label: "timeout" },
        { from: "draft", to: "review" },
        { from: "review", to: "log", label: "approved" },
        { from: "review", to: "pause", label: "rejected" },
        { from: "log", to: "done" },
      ],
    };
    const { revision } = await getDraft(t.db, orgId, automationId);
    expect((await saveDraft(t.db, orgId, automationId, graph, revision, "test")).problems).toEqual([]);
    await expect(publishDraft(t.db, orgId, automationId, "test", "owner")).resolves.toMatchObject({ version: 2 });
  });
  it("templates that insert text without escaping it ({{{ }}} or {{& }}), in every template field of every kind", async () => {
    const why = (written: string, instead: string) =>
      `${written} uses triple braces, which insert text without escaping it, so a contact could put their own HTML or links into your email or message. Use ${instead}: it is shown exactly as typed.`;
    const graph = {
      nodes: [
        trigger,
        email({ to: "{{{input.email}}}", subject: "Hi {{& input.name}}", text: "{{{input.name}}}", html: "<p>Hi {{{input.name}}}</p>" }),
        { id: "draft", kind: "model_draft", config: { connection: "model", prompt: "Write to {{{input.name}}}", system: "{{& input.tone}}" } },
        { id: "log", kind: "crm_upsert", config: { connection: "crm", object: "note", fields: { name: "{{{input.name}}}" } } },
        { id: "review", kind: "approval", config: { approvers: { role: "approver" }, title: "Send to {{{input.name}}}?", content: "{{{steps.draft.output.text}}}", deadlineSeconds: 60 } },
        end,
        { id: "dropped", kind: "end" },
      ],
      edges: [
        { from: "t", to: "send" },
        { from: "send", to: "draft" },
        { from: "draft", to: "log" },
        { from: "log", to: "review" },
        { from: "review", to: "done", label: "approved" },
        { from: "review", to: "dropped", label: "rejected" },
      ],
    };
    expect(await refusal(graph)).toEqual([
      { path: "node:send.config.to", message: why("{{{input.email}}}", "{{input.email}}") },
      { path: "node:send.config.subject", message: why("{{& input.name}}", "{{input.name}}").replace("uses triple braces, which insert", 'uses "{{&", which inserts') },
      { path: "node:send.config.text", message: why("{{{input.name}}}", "{{input.name}}") },
      { path: "node:send.config.html", message: why("{{{input.name}}}", "{{input.name}}") },
      { path: "node:draft.config.prompt", message: why("{{{input.name}}}", "{{input.name}}") },
      { path: "node:draft.config.system", message: why("{{& input.tone}}", "{{input.tone}}").replace("uses triple braces, which insert", 'uses "{{&", which inserts') },
      { path: "node:log.config.fields.name", message: why("{{{input.name}}}", "{{input.name}}") },
      { path: "node:review.config.title", message: why("{{{input.name}}}", "{{input.name}}") },
      { path: "node:review.config.content", message: why("{{{steps.draft.output.text}}}", "{{steps.draft.output.text}}") },
    ]);
  });

  it("an HTTP request using a credential outside its connection's base URL", async () => {
    const call = (url: string): Node => ({ id: "call", kind: "http_request", config: { url, connection: "billing" } });
    expect(await refusal(chain(call("https://attacker.example.net/collect")))).toEqual([
      {
        path: "node:call.config.url",
        message: '"billing" only sends its credential to addresses under https://billing.example.com/v2: use an address there, or another connection',
      },
    ]);
    const { revision } = await getDraft(t.db, orgId, automationId);
    await saveDraft(t.db, orgId, automationId, chain(call("https://billing.example.com/v2/invoices")), revision, "test");
    await expect(publishDraft(t.db, orgId, automationId, "test", "owner")).resolves.toMatchObject({ version: expect.any(Number) });
  });
});
