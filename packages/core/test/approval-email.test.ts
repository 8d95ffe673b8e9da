import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideApproval, reviseApproval } from "../src/people/approvals/decide";
import { upsertMember } from "../src/people/auth/users";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { advanceRun } from "../src/run/engine/advance";
import { InvalidGraphError } from "../src/base/errors";
import { createLogger } from "../src/base/log";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";
import { applyMigration } from "../src/run/run-migrations/migrate";

/**
 * An approval that approves an email (`email: "send"`) shows that email as it will be sent, and the send step sends
 * exactly that or parks with the reason. Real database, real SMTP server, real runner.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId = "";
let sam = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
let seq = 0;

function followUp(o: { subject?: string; approval?: Record<string, unknown>; extraNodes?: unknown[]; edges?: unknown[] } = {}) {
  return {
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      {
        id: "review",
        kind: "approval",
        config: { approvers: { users: ["sam@acme.test"] }, title: "Send the follow-up to {{contact.email}}?", email: "send", deadlineSeconds: 3600, ...o.approval },
      },
      { id: "send", kind: "send_email", config: { connection: "mail", subject: o.subject ?? "About {{input.topic}}", text: "{{input.draft}}" } },
      { id: "done", kind: "end" },
      { id: "dropped", kind: "end" },
      ...(o.extraNodes ?? []),
    ],
    edges: o.edges ?? [
      { from: "t", to: "review" },
      { from: "review", to: "send", label: "approved" },
      { from: "review", to: "dropped", label: "rejected" },
      { from: "send", to: "done" },
    ],
  };
}

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  orgId = (await publish(t.db, parseGraph(followUp()), { automation: "follow-up" })).orgId;
  await publish(t.db, parseGraph(followUp()), { automation: "moved" });
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "Acme <hello@acme.test>" }, secret: "" });
  sam = await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: null, role: "approver" });
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });
const walk = (runId: string) => advanceRun(t.db, graphs, { orgId, runId, reason: "signal" });

/** A run walked to its approval: what the approval shows, and its id and digest. */
async function asked(automation: string) {
  const runId = await startTestRun(t.db, automation, { id: `evt_${++seq}`, email: "maya@example.com", topic: "pricing", draft: "Hi Maya, here are the prices." });
  await walk(runId);
  const [a] = await q("SELECT id, digest, content FROM approvals WHERE run_id = $1", [runId]);
  return { runId, approvalId: a.id as string, digest: a.digest as string, content: a.content as string };
}

async function approve(a: { approvalId: string; digest: string; runId: string }) {
  expect(await decideApproval(t.db, { orgId, approvalId: a.approvalId, decision: "approved", digest: a.digest, via: "inbox", actor: { userId: sam } })).toMatchObject({ ok: true });
  await walk(a.runId);
  const [send] = await q("SELECT id, status FROM steps WHERE run_id = $1 AND node_id = 'send'", [a.runId]);
  expect(send.status).toBe("ready");
  return send.id as string;
}

const sentFor = (runId: string) => smtp.received.filter((m) => m.effectKey === `${runId}/send/1`);

describe("an approval of an email", () => {
  it("shows the email as it will be sent, and the send delivers exactly that", async () => {
    const a = await asked("follow-up");
    expect(a.content).toBe("To: maya@example.com\nSubject: About pricing\n\nHi Maya, here are the prices.");
    const stepId = await approve(a);
    expect((await runner().run(stepId)).kind).toBe("settled");
    const sent = sentFor(a.runId);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: ["maya@example.com"], subject: "About pricing" });
    expect(sent[0]?.raw).toContain("Hi Maya, here are the prices.");
  });

  it("parks, sending nothing, when the email would go out different from what Sam approved (the run moved to a version with another subject)", async () => {
    const a = await asked("moved");
    const stepId = await approve(a);
    // Version 2 words the subject differently; the approved run is moved onto it before its email goes out.
    const v2 = await publish(t.db, parseGraph(followUp({ subject: "Our prices, {{input.topic}}" })), { automation: "moved" });
    await applyMigration(t.db, graphs, orgId, v2.automationId, { fromVersion: 1, toVersion: 2 }, "user:sam@acme.test");
    expect(await q("SELECT v.version FROM runs r JOIN automation_versions v ON v.id = r.version_id WHERE r.id = $1", [a.runId])).toEqual([{ version: 2 }]);
    expect((await runner().run(stepId)).kind).toBe("parked");
    expect(sentFor(a.runId)).toHaveLength(0);
    const [step] = await q("SELECT status, error FROM steps WHERE id = $1", [stepId]);
    expect(step.status).toBe("parked");
    expect(step.error).toMatchObject({
      code: "email_differs",
      reason: "The email differs from what Sam approved: the subject changed since the approval showed it. Nothing was sent.",
      changed: ["the subject"],
    });
    // Nothing is remembered of an effect that never began: a resume after a fix is a plain first attempt.
    expect(await q("SELECT count(*)::int AS n FROM effects WHERE run_id = $1", [a.runId])).toEqual([{ n: 0 }]);
  });

  it("parks when the content under review was changed after it showed the email (Sam approved other text)", async () => {
    const a = await asked("follow-up");
    await reviseApproval(t.db, orgId, a.approvalId, "Hi Maya, here are our (new) prices.", "user:eddie@acme.test");
    const [revised] = await q("SELECT digest FROM approvals WHERE id = $1", [a.approvalId]);
    const stepId = await approve({ ...a, digest: revised.digest });
    expect((await runner().run(stepId)).kind).toBe("parked");
    expect(sentFor(a.runId)).toHaveLength(0);
    const [step] = await q("SELECT error FROM steps WHERE id = $1", [stepId]);
    expect(step.error.reason).toMatch(/^The email differs from what Sam approved: the approval's content was changed after it showed this email/);
  });
});

describe("publishing an approval of an email", () => {
  const problems = (graph: unknown) => {
    try {
      parseGraph(graph);
      return [];
    } catch (error) {
      if (!(error instanceof InvalidGraphError)) throw error;
      return error.problems.map((p) => `${p.path}: ${p.message}`);
    }
  };

  it("refuses an email that is not a Send email step after the approved edge, one reachable without it, and one fed by later steps", () => {
    expect(problems(followUp({ approval: { email: "done" } }))).toEqual(['node:review.config.email: "done" is not a Send email step of this automation']);
    expect(
      problems(
        followUp({
          edges: [
            { from: "t", to: "review" },
            { from: "review", to: "dropped", label: "approved" },
            { from: "review", to: "send", label: "rejected" },
            { from: "send", to: "done" },
          ],
        }),
      ),
    ).toEqual(['node:review.config.email: "send" does not come after this approval\'s "approved" edge']);
    // A branch that skips the approval reaches the email too.
    const skip = followUp({
      extraNodes: [{ id: "vip", kind: "branch", config: { condition: { path: "input.vip", op: "truthy" } } }],
      edges: [
        { from: "t", to: "vip" },
        { from: "vip", to: "send", label: "true" },
        { from: "vip", to: "review", label: "false" },
        { from: "review", to: "send", label: "approved" },
        { from: "review", to: "dropped", label: "rejected" },
        { from: "send", to: "done" },
      ],
    });
    expect(problems(skip)).toEqual(['node:review.config.email: "send" can be reached without this approval: every way to the email must pass its "approved" edge']);
    // The email's text comes from a step after the approval: the approver could not have seen it.
    const late = followUp({
      extraNodes: [{ id: "polish", kind: "http_request", config: { url: "https://example.com/polish" } }],
      edges: [
        { from: "t", to: "review" },
        { from: "review", to: "polish", label: "approved" },
        { from: "review", to: "dropped", label: "rejected" },
        { from: "polish", to: "send" },
        { from: "send", to: "done" },
      ],
    });
    const lateSend = late.nodes.find((n) => (n as { id: string }).id === "send") as { config: Record<string, unknown> };
    lateSend.config.text = "{{steps.polish.output.body.text}}";
    expect(problems(late)).toEqual([
      'node:review.config.email: "send" uses {{steps.polish...}}, which this approval cannot show: it runs after the approval is asked',
    ]);
    // Without an email, the content is required as before.
    expect(problems(followUp({ approval: { email: undefined } }))).toEqual(["nodes.1.config.content: say what they approve: the content, or the email step it approves"]);
  });
});
