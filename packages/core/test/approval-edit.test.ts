import { createTestDatabase, emailBody, publish, type ReceivedEmail, type SmtpTarget, slackViewSubmission, startSmtpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createLogger } from "../src/base/log";
import { decideApproval } from "../src/people/approvals/decide";
import { contentDigest } from "../src/people/approvals/digest";
import { type EditRequest, editApproval } from "../src/people/approvals/edit";
import { issueEditToken } from "../src/people/approvals/edit-token";
import { readBack } from "../src/people/approvals/judge";
import { handleSlackInteraction } from "../src/people/approvals/slack-interaction";
import { upsertMember } from "../src/people/auth/users";
import { createConnection } from "../src/providers/connections/connect";
import { advanceRun } from "../src/run/engine/advance";
import { eraseContact } from "../src/run/contacts/erase";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Edit before approving: an approver edits the email an approval shows and approves it; the approval binds the edited
 * content, the send sends exactly the edited subject and text, and every other click reads back what happened.
 * Real database, real SMTP server, real runner, Slack's signed view_submission through the interaction handler.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId = "";
let sam = "";
let alex = "";
let vic = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const signingSecret = "edit-test-signing-secret";
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
let seq = 0;

function followUp(html?: string) {
  return {
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "review", kind: "approval", config: { approvers: { users: ["sam@acme.test", "alex@acme.test"] }, title: "Send the follow-up?", email: "send", deadlineSeconds: 3600 } },
      { id: "send", kind: "send_email", config: { connection: "mail", subject: "About {{input.topic}}", text: "{{input.draft}}", ...(html ? { html } : {}) } },
      { id: "done", kind: "end" },
      { id: "dropped", kind: "end" },
    ],
    edges: [
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
  await publish(t.db, parseGraph(followUp("<p>Hi Maya, <b>here are the prices</b>.</p>")), { automation: "with-html" });
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "Acme <hello@acme.test>" }, secret: "" });
  await createConnection(t.db, { orgId, kind: "slack", name: "slack", config: { teamId: "T0EDIT", apiUrl: "http://127.0.0.1:9/api/" }, secret: "xoxb-edit" });
  sam = await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: null, role: "approver", slackUserId: "U0SAM" });
  alex = await upsertMember(t.db, { orgId, email: "alex@acme.test", name: "Alex", password: null, role: "approver" });
  vic = await upsertMember(t.db, { orgId, email: "vic@acme.test", name: "Vic", password: null, role: "approver" });
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

const walk = (runId: string) => advanceRun(t.db, graphs, { orgId, runId, reason: "signal" });
const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });

async function asked(automation = "follow-up", email = "maya@example.com") {
  const runId = await startTestRun(t.db, automation, { id: `evt_${++seq}`, email, topic: "pricing", draft: "Hi Maya, here are the prices." });
  await walk(runId);
  const [a] = await q("SELECT id, digest, step_id FROM approvals WHERE run_id = $1", [runId]);
  return { runId, approvalId: a.id as string, digest: a.digest as string, stepId: a.step_id as string };
}

const edit = (a: { approvalId: string; digest: string }, o: Partial<EditRequest> = {}) =>
  editApproval(t.db, {
    orgId,
    approvalId: a.approvalId,
    digest: a.digest,
    subject: "Our prices for pricing",
    text: "Hi Maya,\n\nhere are this month's prices. Shall we talk on Thursday?",
    via: "inbox",
    actor: { userId: sam },
    approve: true,
    ...o,
  });

const state = async (a: { approvalId: string; runId: string }) => ({
  approval: await q("SELECT status, content, digest, email_digest, email_draft FROM approvals WHERE id = $1", [a.approvalId]),
  edits: await q("SELECT count(*)::int AS n FROM approval_edits WHERE approval_id = $1", [a.approvalId]),
  decided: await q("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type IN ('approval.decided', 'approval.edited')", [a.runId]),
});

/** Sends the approved email (the step after the approval) and returns what the SMTP server received. */
async function send(runId: string) {
  await walk(runId);
  const [step] = await q("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  expect((await runner().run(step.id)).kind).toBe("settled");
  return smtp.received.filter((m) => m.effectKey === `${runId}/send/1`);
}

describe("editing an approval's email", () => {
  it("is refused to someone who may not decide it, and changes nothing", async () => {
    const a = await asked();
    const before = await state(a);
    const r = await edit(a, { actor: { userId: vic } });
    expect(r).toMatchObject({ ok: false, refusal: { reason: "not_permitted" } });
    expect((await state(a)).approval).toEqual(before.approval);
    expect((await state(a)).edits).toEqual([{ n: 0 }]);
  });

  it("is refused once the approval is decided (and reads back the decision)", async () => {
    const a = await asked();
    expect(await decideApproval(t.db, { orgId, approvalId: a.approvalId, decision: "rejected", digest: a.digest, via: "inbox", actor: { userId: alex } })).toMatchObject({ ok: true });
    const r = await edit(a);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(readBack(r.refusal)).toMatch(/^Not recorded: rejected by Alex \(inbox\) at /);
    expect(await q("SELECT count(*)::int AS n FROM approval_edits WHERE approval_id = $1", [a.approvalId])).toEqual([{ n: 0 }]);
    expect(await q("SELECT status FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ status: "rejected" }]);
  });

  it("saves the edit and approves in one transaction, binding the edited content's digest; the send sends exactly the edited subject and text", async () => {
    const a = await asked();
    const r = await edit(a);
    expect(r).toMatchObject({ ok: true, status: "approved", by: "Sam" });
    const edited = "To: maya@example.com\nSubject: Our prices for pricing\n\nHi Maya,\n\nhere are this month's prices. Shall we talk on Thursday?";
    const [row] = await q("SELECT status, content, digest, email_draft FROM approvals WHERE id = $1", [a.approvalId]);
    expect(row).toMatchObject({ status: "approved", content: edited, digest: contentDigest("Send the follow-up?", edited) });
    expect(row.digest).not.toBe(a.digest);
    // The decision's signal names the edited digest: what Sam approved is the edited content.
    const [signal] = await q("SELECT payload FROM signals WHERE identity = $1", [`approval:${a.approvalId}`]);
    expect(signal.payload.digest).toBe(row.digest);
    expect(await q("SELECT original_subject, original_text, edited_subject, edited_by_name, via, digest_before, digest_after FROM approval_edits WHERE approval_id = $1", [a.approvalId])).toEqual([
      { original_subject: "About pricing", original_text: "Hi Maya, here are the prices.", edited_subject: "Our prices for pricing", edited_by_name: "Sam", via: "inbox", digest_before: a.digest, digest_after: row.digest },
    ]);
    expect((await q("SELECT type FROM run_events WHERE run_id = $1 AND type LIKE 'approval.%' ORDER BY id", [a.runId])).map((e) => e.type)).toEqual([
      "approval.requested",
      "approval.edited",
      "approval.decided",
    ]);
    const sent = await send(a.runId);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: ["maya@example.com"], subject: "Our prices for pricing" });
    expect(emailBody(sent[0] as ReceivedEmail)).toEqual({ text: "Hi Maya,\n\nhere are this month's prices. Shall we talk on Thursday?", html: null });
    expect(sent[0]?.raw).not.toContain("Hi Maya, here are the prices.");
  });

  it("an email with an HTML version goes out as the edited text only (the HTML version is dropped, and the edit says so)", async () => {
    const a = await asked("with-html");
    expect(await edit(a)).toMatchObject({ ok: true });
    expect(await q("SELECT had_html FROM approval_edits WHERE approval_id = $1", [a.approvalId])).toEqual([{ had_html: true }]);
    const [sent] = await send(a.runId);
    expect(sent?.subject).toBe("Our prices for pricing");
    expect(emailBody(sent as ReceivedEmail)).toEqual({ text: "Hi Maya,\n\nhere are this month's prices. Shall we talk on Thursday?", html: null });
    expect(sent?.raw).not.toContain("<b>here are the prices</b>");
  });

  it("a second approver's click on the version shown before the edit is refused and reads back who edited it and when", async () => {
    const a = await asked();
    expect(await edit(a, { approve: false })).toMatchObject({ ok: true, status: "pending" });
    const r = await decideApproval(t.db, { orgId, approvalId: a.approvalId, decision: "approved", digest: a.digest, via: "slack", actor: { userId: alex } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(readBack(r.refusal)).toMatch(/^Not recorded: Sam edited the draft at \d\d:\d\d UTC on \d{4}-\d\d-\d\d after this was shown to you; read the new version before deciding$/);
    // Someone who may not decide it learns nothing about the edit.
    const stranger = await decideApproval(t.db, { orgId, approvalId: a.approvalId, decision: "approved", digest: a.digest, via: "inbox", actor: { userId: vic } });
    expect(stranger).toMatchObject({ ok: false, refusal: { reason: "not_permitted" } });
    // The new version can be approved, and its email is the edited one.
    const [now] = await q("SELECT digest FROM approvals WHERE id = $1", [a.approvalId]);
    expect(await decideApproval(t.db, { orgId, approvalId: a.approvalId, decision: "approved", digest: now.digest, via: "inbox", actor: { userId: alex } })).toMatchObject({ ok: true, by: "Alex" });
    const [sent] = await send(a.runId);
    expect(sent?.subject).toBe("Our prices for pricing");
  });

  it("a repeated Save and approve (two at once) edits once and approves once; the other reads back the decision", async () => {
    const a = await asked();
    const results = await Promise.all([edit(a), edit(a), edit(a, { text: "A different edit" })]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    for (const r of results.filter((x) => !x.ok)) {
      if (r.ok) continue;
      expect(readBack(r.refusal)).toMatch(/^Already recorded: you approved this at /);
    }
    expect((await state(a)).edits).toEqual([{ n: 1 }]);
    expect(await q("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'approval.decided'", [a.runId])).toEqual([{ n: 1 }]);
  });

  it("refuses an empty subject or a subject on two lines, in words, changing nothing", async () => {
    const a = await asked();
    for (const [subject, words] of [["  ", "the subject is empty"], ["One\nTwo", "the subject must be one line"]] as const) {
      const r = await edit(a, { subject });
      expect(r).toMatchObject({ ok: false, refusal: { reason: "not_editable" } });
      if (!r.ok) expect(r.refusal.message).toContain(words);
    }
    expect((await state(a)).edits).toEqual([{ n: 0 }]);
  });
});

describe("erasing the contact", () => {
  it("clears the approval's email draft and overwrites its edits' texts; who edited, and when, stay", async () => {
    const a = await asked("follow-up", "eve@example.com");
    expect(await edit(a, { text: "Dear Eve, about your private matter", approve: false })).toMatchObject({ ok: true });
    expect(await eraseContact(t.db, graphs, orgId, "eve@example.com", "test")).toMatchObject({ found: true });
    expect(await q("SELECT email_draft FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ email_draft: null }]);
    expect(await q("SELECT original_subject, original_text, edited_subject, edited_text, edited_by_name FROM approval_edits WHERE approval_id = $1", [a.approvalId])).toEqual([
      { original_subject: "(erased)", original_text: "(erased)", edited_subject: "(erased)", edited_text: "(erased)", edited_by_name: "Sam" },
    ]);
  });
});

describe("the Slack modal's view_submission", () => {
  const submit = async (token: string, o: { signingSecret?: string; subject?: string } = {}) => {
    const [{ now }] = await q("SELECT EXTRACT(EPOCH FROM now())::float8 AS now");
    const req = slackViewSubmission(
      o.signingSecret ?? signingSecret,
      { teamId: "T0EDIT", userId: "U0SAM", privateMetadata: token, subject: o.subject ?? "Edited in Slack", text: "Hi Maya, edited in Slack." },
      Math.floor(now),
    );
    return handleSlackInteraction(t.db, { body: req.body, signature: req.headers["x-slack-signature"] ?? null, timestamp: req.headers["x-slack-request-timestamp"] ?? null }, signingSecret);
  };
  const token = (a: { approvalId: string; runId: string; stepId: string; digest: string }, expiresAt = new Date(Date.now() + 3_600_000)) =>
    issueEditToken({ orgId, runId: a.runId, stepId: a.stepId, approvalId: a.approvalId, digest: a.digest }, expiresAt, new Date());

  it("refuses a bad signature and an expired token, changing nothing; a good one saves the edit and approves as the linked Slack user", async () => {
    const a = await asked();
    const before = await state(a);
    const forged = await submit(token(a), { signingSecret: "not the secret" });
    expect(forged).toMatchObject({ status: 401, body: { error: "bad_signature" } });
    const expired = await submit(token(a, new Date(Date.now() - 1_000)));
    expect(expired.view).toEqual({ response_action: "errors", errors: { body: "This edit form has expired: the approval's deadline passed. Nothing was saved." } });
    const tampered = await submit(`${token(a).slice(0, -2)}xx`);
    expect(tampered.view).toMatchObject({ response_action: "errors", errors: { body: "This edit form is not valid. Nothing was saved." } });
    const empty = await submit(token(a), { subject: "" });
    expect(empty.view).toEqual({ response_action: "errors", errors: { subject: "Not recorded: the subject is empty: write a subject." } });
    expect(await state(a)).toEqual(before);

    const ok = await submit(token(a));
    expect(ok.view).toEqual({ response_action: "clear" });
    expect(await q("SELECT status, decided_by_name, decided_via FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ status: "approved", decided_by_name: "Sam", decided_via: "slack" }]);
    expect(await q("SELECT via, edited_subject FROM approval_edits WHERE approval_id = $1", [a.approvalId])).toEqual([{ via: "slack", edited_subject: "Edited in Slack" }]);
    // Submitted again (Slack retried): nothing more, and the modal reads back the decision.
    const again = await submit(token(a));
    expect(again.view).toMatchObject({ response_action: "errors", errors: { body: expect.stringMatching(/^Already recorded: you approved this at /) } });
    expect((await state(a)).edits).toEqual([{ n: 1 }]);
  });
});
