import { GraphCache } from "@holdfast/core/versions";
import { decideApproval, type DecisionRequest, removeMember, reviseApproval, upsertMember } from "@holdfast/core/people";
import { advanceRun, requestCancel, sweepOnce } from "@holdfast/core/run";
import { approvalGraph, createTestDatabase, publish, type TestDatabase, waitFor, startTestRun } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Approvals against the real database: the first decision wins, permission is read when the decision is taken,
 * each deadline action (escalate / default / stop), a cancelled run, changed content. Each refusal is visible on
 * the run's timeline and changes nothing else.
 */
let t: TestDatabase;
let orgId = "";
const users: Record<string, string> = {};
const graphs = new GraphCache();
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await publish(t.db, approvalGraph(), { automation: "named" })).orgId;
  await publish(t.db, approvalGraph({ approvers: { role: "approver" }, deadlineSeconds: 1, onDeadline: { action: "default", decision: "approved" } }), { automation: "default" });
  await publish(t.db, approvalGraph({ deadlineSeconds: 1, onDeadline: { action: "stop" } }), { automation: "stop" });
  await publish(t.db, approvalGraph({ approvers: { role: "approver" } }), { automation: "role" });
  await publish(
    t.db,
    approvalGraph({ deadlineSeconds: 1, onDeadline: { action: "escalate", to: { users: ["olivia@acme.test"] }, deadlineSeconds: 3600, afterwards: "rejected" } }),
    { automation: "escalate" },
  );
  await publish(
    t.db,
    approvalGraph({ deadlineSeconds: 1, onDeadline: { action: "escalate", to: { users: ["olivia@acme.test"] }, deadlineSeconds: 1, afterwards: "stop" } }),
    { automation: "escalate-stop" },
  );
  const people = [
    ["sam", "sam@acme.test", "Sam", "approver"],
    ["alex", "alex@acme.test", "Alex", "approver"],
    ["olivia", "olivia@acme.test", "Olivia", "approver"],
    ["vic", "vic@acme.test", "Vic", "viewer"],
    ["eddie", "eddie@acme.test", "Eddie", "editor"],
  ] as const;
  for (const [key, email, name, role] of people) users[key] = await upsertMember(t.db, { orgId, email, name, password: null, role });
});
afterAll(async () => t?.drop());

let seq = 0;
/** A run of `automation` walked to its approval step: the run, its approval id and digest. */
async function awaitingApproval(automation: string, draft = "Hi Maya, following up on our call."): Promise<{ runId: string; approvalId: string; digest: string }> {
  const runId = await startTestRun(t.db, automation, { id: `evt_${++seq}`, email: "maya@example.com", draft });
  const rows = await waitFor(async () => {
    const r = await q("SELECT id, digest FROM approvals WHERE run_id = $1 AND status = 'pending'", [runId]);
    return r.length ? r : undefined;
  }, 10_000, "the approval to be requested");
  return { runId, approvalId: rows[0].id, digest: rows[0].digest };
}

const decide = (a: { approvalId: string; digest: string }, who: string, decision: "approved" | "rejected", extra: Partial<DecisionRequest> = {}) =>
  decideApproval(t.db, { orgId, approvalId: a.approvalId, decision, digest: a.digest, via: "inbox", actor: { userId: users[who] as string }, ...extra });

const walk = (runId: string) => advanceRun(t.db, graphs, { orgId, runId, reason: "signal" });
const runOf = async (runId: string) => (await q("SELECT status, error FROM runs WHERE id = $1", [runId]))[0];
const endOf = async (runId: string) => (await q("SELECT node_id FROM run_events WHERE run_id = $1 AND type = 'run.completed'", [runId]))[0]?.node_id;
const events = async (runId: string, type: string) => q("SELECT data FROM run_events WHERE run_id = $1 AND type = $2 ORDER BY id", [runId, type]);

/**
 * Fires the run's pending deadline timers (the sweeper's due sweep, which walks the run on in the same transaction)
 * once the 1 s deadlines have passed, then walks the run (nothing new by then). A walk that escalates writes the next
 * stage's own timer: only the timers pending before are waited for.
 */
async function pastDeadline(runId: string): Promise<void> {
  const pending = (await q("SELECT id FROM timers WHERE run_id = $1 AND fired_at IS NULL", [runId])).map((r) => r.id as string);
  await waitFor(async () => {
    await sweepOnce(t.db, { staleSeconds: 3600, batchSize: 100, outboxRetentionSeconds: 3600 });
    return (await q("SELECT 1 FROM timers WHERE id = ANY($1) AND fired_at IS NULL", [pending])).length === 0;
  }, 10_000, "the deadline timer to fire");
  await walk(runId);
}

describe("deciding", () => {
  it("an approval goes along its edge; the decision, its signal and the settle are one commit", async () => {
    const a = await awaitingApproval("named");
    const [step] = await q("SELECT status, correlation_key FROM steps WHERE run_id = $1 AND node_id = 'review'", [a.runId]);
    expect(step).toEqual({ status: "waiting", correlation_key: `approval:${a.approvalId}` });
    expect(await decide(a, "sam", "approved")).toMatchObject({ ok: true, status: "approved", by: "Sam" });
    expect(await q("SELECT status, decided_by_name, decided_via FROM approvals WHERE id = $1", [a.approvalId])).toEqual([
      { status: "approved", decided_by_name: "Sam", decided_via: "inbox" },
    ]);
    expect(await q("SELECT fired_by FROM timers WHERE run_id = $1", [a.runId])).toEqual([{ fired_by: "signal" }]);
    await walk(a.runId);
    expect(await runOf(a.runId)).toMatchObject({ status: "completed" });
    expect(await endOf(a.runId)).toBe("sent");
  });

  it("a rejection goes along the rejected edge", async () => {
    const a = await awaitingApproval("named");
    expect(await decide(a, "sam", "rejected")).toMatchObject({ ok: true, status: "rejected" });
    await walk(a.runId);
    expect(await endOf(a.runId)).toBe("dropped");
  });

  it("100 concurrent approve / reject clicks from two people and two channels: one decision, 99 read-backs of it", async () => {
    await upsertMember(t.db, { orgId, email: "alex@acme.test", name: "Alex", password: null, role: "approver", slackUserId: "U0ALEX" });
    const a = await awaitingApproval("role"); // role approver: Sam and Alex may both decide
    const clicks = Array.from({ length: 100 }, (_, i) =>
      i % 2 === 0
        ? decide(a, "sam", "approved")
        : decide(a, "alex", "rejected", { via: "slack", actor: { slackUserId: "U0ALEX" } }),
    );
    const results = await Promise.all(clicks);
    const won = results.filter((r) => r.ok);
    expect(won).toHaveLength(1);
    const winner = won[0] as Extract<(typeof results)[number], { ok: true }>;
    const refused = results.filter((r) => !r.ok);
    expect(refused).toHaveLength(99);
    for (const [i, r] of results.entries()) {
      if (r.ok) continue;
      expect(r).toMatchObject({ ok: false, refusal: { reason: "already_decided", status: winner.status, by: winner.by } });
      // The winner's own repeated clicks read back "you ..."; the other person reads who decided.
      const sameAsWinner = (i % 2 === 0) === (winner.by === "Sam");
      const expected = sameAsWinner ? `^you ${winner.status} this at \\d\\d:\\d\\d UTC` : `^${winner.status} by ${winner.by} \\((inbox|slack)\\) at \\d\\d:\\d\\d UTC`;
      expect(r.refusal.message).toMatch(new RegExp(expected));
    }
    expect(await q("SELECT count(*)::int AS n FROM signals WHERE identity = $1", [`approval:${a.approvalId}`])).toEqual([{ n: 1 }]);
    expect(await events(a.runId, "approval.decided")).toHaveLength(1);
    expect(await events(a.runId, "approval.refused")).toHaveLength(99);
    expect(await q("SELECT count(*)::int AS n FROM outbox WHERE run_id = $1 AND payload->>'reason' = 'signal'", [a.runId])).toEqual([{ n: 1 }]);
  });
});

describe("refused decisions change nothing but the timeline", () => {
  it("a user whose access was taken away since the request is refused; one never named is refused too", async () => {
    const a = await awaitingApproval("named");
    expect(await decide(a, "alex", "approved")).toMatchObject({ ok: false, refusal: { reason: "not_permitted" } });
    expect(await decide(a, "vic", "approved")).toMatchObject({ ok: false, refusal: { reason: "not_permitted" } });
    expect(await decide(a, "eddie", "approved")).toMatchObject({ ok: false, refusal: { reason: "not_permitted" } });
    await removeMember(t.db, orgId, "sam@acme.test");
    try {
      expect(await decide(a, "sam", "approved")).toMatchObject({ ok: false, refusal: { reason: "not_permitted", message: "you are not a member of this organisation" } });
      expect(await q("SELECT status FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ status: "pending" }]);
      expect(await q("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'review'", [a.runId])).toEqual([{ status: "waiting" }]);
      const refusals = await events(a.runId, "approval.refused");
      expect(refusals.map((r) => r.data.reason)).toEqual(["not_permitted", "not_permitted", "not_permitted", "not_permitted"]);
      expect(refusals.map((r) => r.data.by)).toEqual(["Alex", "Vic", "Eddie", "Sam"]);
    } finally {
      users.sam = await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: null, role: "approver" });
    }
    expect(await decide(a, "sam", "approved")).toMatchObject({ ok: true });
  });

  it("changed content: a decision bound to the old digest is refused; the new content can be decided", async () => {
    const a = await awaitingApproval("named", "First draft");
    const revised = await reviseApproval(t.db, orgId, a.approvalId, "Second draft, after legal's edits", "test");
    expect(revised.digest).not.toBe(a.digest);
    expect(await decide(a, "sam", "approved")).toMatchObject({ ok: false, refusal: { reason: "content_changed" } });
    expect((await events(a.runId, "approval.content_changed")).length).toBe(1);
    expect(await decide({ ...a, digest: revised.digest }, "sam", "approved")).toMatchObject({ ok: true });
  });

  it("a cancelled run: its approval is closed and a later decision is refused, saying why", async () => {
    const a = await awaitingApproval("named");
    expect((await requestCancel(t.db, graphs, orgId, a.runId, "contact unsubscribed", "test")).state).toBe("cancelled");
    expect(await q("SELECT status, decided_via FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ status: "cancelled", decided_via: "run" }]);
    const r = await decide(a, "sam", "approved");
    expect(r).toMatchObject({ ok: false, refusal: { reason: "already_decided", status: "cancelled" } });
    if (!r.ok) expect(r.refusal.message).toMatch(/^closed: the run stopped/);
    expect(await runOf(a.runId)).toMatchObject({ status: "cancelled" });
  });
});

describe("deadlines", () => {
  it("default: the deadline decides (approved), and a late click reads that back", async () => {
    const a = await awaitingApproval("default");
    await pastDeadline(a.runId);
    expect(await q("SELECT status, decided_via FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ status: "approved", decided_via: "deadline" }]);
    expect(await endOf(a.runId)).toBe("sent");
    expect(await events(a.runId, "approval.defaulted")).toEqual([{ data: { decision: "approved", stage: 1 } }]);
    const late = await decide(a, "sam", "rejected");
    expect(late).toMatchObject({ ok: false, refusal: { reason: "already_decided", status: "approved" } });
    if (!late.ok) expect(late.refusal.message).toMatch(/^approved by default when the deadline passed/);
  });

  it("a decision after the deadline, before the engine walked on, is refused as late", async () => {
    const a = await awaitingApproval("stop");
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await decide(a, "sam", "approved")).toMatchObject({ ok: false, refusal: { reason: "deadline_passed" } });
    expect(await q("SELECT status FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ status: "pending" }]);
  });

  it("stop: the run stops with a visible reason and the approval expires", async () => {
    const a = await awaitingApproval("stop");
    await pastDeadline(a.runId);
    expect(await runOf(a.runId)).toMatchObject({ status: "failed", error: { reason: "approval review: the deadline passed with no decision" } });
    expect(await q("SELECT status FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ status: "expired" }]);
    expect(await decide(a, "sam", "approved")).toMatchObject({ ok: false, refusal: { reason: "already_decided", status: "expired" } });
  });

  it("escalate: a second request goes to the escalation approvers with their own deadline; they decide", async () => {
    const a = await awaitingApproval("escalate");
    await pastDeadline(a.runId);
    expect(await q("SELECT stage, status FROM approvals WHERE run_id = $1 ORDER BY stage", [a.runId])).toEqual([
      { stage: 1, status: "escalated" },
      { stage: 2, status: "pending" },
    ]);
    const [second] = await q("SELECT id, digest, approvers FROM approvals WHERE run_id = $1 AND stage = 2", [a.runId]);
    expect(second.approvers).toEqual({ users: ["olivia@acme.test"] });
    expect(second.digest).toBe(a.digest);
    const next = { approvalId: second.id as string, digest: second.digest as string };
    expect(await decide(next, "sam", "approved")).toMatchObject({ ok: false, refusal: { reason: "not_permitted" } });
    expect(await decide(next, "olivia", "approved")).toMatchObject({ ok: true });
    await walk(a.runId);
    expect(await endOf(a.runId)).toBe("sent");
    expect(await events(a.runId, "approval.escalated")).toEqual([{ data: { fromStage: 1, toStage: 2 } }]);
  });

  it("escalate, then stop: when the escalation's deadline passes too, the run stops", async () => {
    const a = await awaitingApproval("escalate-stop");
    await pastDeadline(a.runId);
    await pastDeadline(a.runId);
    expect(await q("SELECT stage, status FROM approvals WHERE run_id = $1 ORDER BY stage", [a.runId])).toEqual([
      { stage: 1, status: "escalated" },
      { stage: 2, status: "expired" },
    ]);
    expect(await runOf(a.runId)).toMatchObject({ status: "failed" });
  });
});
