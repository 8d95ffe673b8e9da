import { approvalGraph, createTestDatabase, publish, type SlackApi, startSlackApi, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notifyApproval } from "../src/people/approvals/notify";
import { upsertMember } from "../src/people/auth/users";
import { createConnection } from "../src/providers/connections/connect";
import { limitsOf } from "../src/providers/connections/limits";
import { pausedCallsOf, pausedCallsWords } from "../src/providers/connections/paused-calls";
import { approvalConfig } from "../src/versions/kinds/approval";
import { createLogger } from "../src/base/log";
import { parkedWhy } from "../src/run/runs/why";

/**
 * Plain words for people (issue 41, item 5): paused calls to a failing connection say how many failed and when one
 * call is tried again, never the engine's names; approvals reach the approvers' own linked Slack users, so nobody
 * types a Slack member id, and a config that holds a raw id keeps working as it was.
 */
const engineWords = /breaker|probe|digest|start key|sha256|µ/i;
const usd = (m: number) => `$${(m / 1e6).toFixed(2)}`;
const at = (d: Date) => d.toISOString().slice(11, 16);

describe("paused calls in words", () => {
  it("says how many calls failed and when it tries again", () => {
    const limits = limitsOf({ breaker: { failureRate: 0.5, minCalls: 5, windowMs: 30_000, coolDownMs: 30_000 } });
    const retryAt = new Date("2026-12-04T16:05:00Z");
    expect(pausedCallsWords(pausedCallsOf("CRM", limits, retryAt), at)).toBe('Calls to "CRM" are paused after 3 of 5 calls failed within 30 seconds; trying again at 16:05');
    const everyCall = limitsOf({ breaker: { failureRate: 1, minCalls: 5, windowMs: 120_000, coolDownMs: 30_000 } });
    expect(pausedCallsWords(pausedCallsOf("CRM", everyCall, retryAt), at)).toBe('Calls to "CRM" are paused after 5 failed calls in a row within 2 minutes; trying again at 16:05');
  });

  it("the run page's reason: from the step's error, also one stored with the engine's words before", () => {
    const error = { code: "breaker_open", connection: "CRM", retryAt: "2026-12-04T16:05:00Z", failedCalls: 3, minCalls: 5, windowMs: 30_000, reason: "x" };
    const why = parkedWhy(error, usd, at);
    expect(why.what).toBe('calls to "CRM" are paused after 3 of 5 calls failed within 30 seconds; trying again at 16:05');
    const old = parkedWhy({ code: "breaker_open", connection: "CRM", reason: '"CRM" is failing: calls are paused (circuit breaker open) and resume when a probe call succeeds' }, usd, at);
    expect(`${old.what} ${old.todo}`).not.toMatch(engineWords);
    expect(old.what).toMatch(/^calls to "CRM" are paused after repeated failures/);
  });
});

describe("approvals in Slack go to the approvers' linked Slack users", () => {
  let t: TestDatabase;
  let slack: SlackApi;
  let orgId = "";
  const log = createLogger("test", "silent");
  const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

  beforeAll(async () => {
    t = await createTestDatabase();
    slack = await startSlackApi();
    orgId = (await publish(t.db, approvalGraph({ approvers: { users: ["sam@acme.test", "lena@acme.test"] }, slack: { connection: "slack", to: "approvers" } }), { automation: "to-approvers" })).orgId;
    await publish(t.db, approvalGraph({ approvers: { users: ["sam@acme.test"] }, slack: { connection: "slack", channel: "U0SAM" } }), { automation: "raw-id" });
    await publish(t.db, approvalGraph({ approvers: { users: ["kim@acme.test"] }, slack: { connection: "slack", to: "approvers" } }), { automation: "unlinked" });
    await createConnection(t.db, { orgId, kind: "slack", name: "slack", config: { teamId: slack.teamId, apiUrl: slack.apiUrl }, secret: slack.token });
    await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: null, role: "owner", slackUserId: "U0SAM" });
    await upsertMember(t.db, { orgId, email: "lena@acme.test", name: "Lena", password: null, role: "approver", slackUserId: "U0LENA" });
    await upsertMember(t.db, { orgId, email: "kim@acme.test", name: "Kim", password: null, role: "approver" });
  });
  afterAll(async () => {
    await slack?.close();
    await t?.drop();
  });

  it("a new step sends to the approvers by default; a config holding a raw id reads as a channel", () => {
    expect(approvalConfig.parse({ approvers: { users: [] , role: "approver" }, title: "T", content: "C", deadlineSeconds: 60, slack: { connection: "slack" } }).slack).toEqual({
      connection: "slack",
      to: "approvers",
    });
    expect(approvalConfig.parse({ approvers: { role: "approver" }, title: "T", content: "C", deadlineSeconds: 60, slack: { connection: "slack", channel: "U0SAM" } }).slack).toEqual({
      connection: "slack",
      to: "channel",
      channel: "U0SAM",
    });
    expect(approvalConfig.safeParse({ approvers: { role: "approver" }, title: "T", content: "C", deadlineSeconds: 60, slack: { connection: "slack", to: "channel" } }).success).toBe(false);
  });

  it("posts one message to the named approvers' Slack users, found through their links", async () => {
    const runId = await startTestRun(t.db, "to-approvers", { id: "evt_1", email: "maya@example.com", draft: "Hello" });
    const [a] = await q("SELECT id, slack FROM approvals WHERE run_id = $1", [runId]);
    expect(a.slack).toEqual({ connection: "slack", channel: "U0LENA,U0SAM" });
    expect(await notifyApproval(t.db, { orgId, approvalId: a.id }, { log, publicUrl: null, worker: "w" })).toBe("posted");
    expect(slack.messages.at(-1)?.channel).toBe("DU0LENA,U0SAM"); // the group conversation the local Slack opened
  });

  it("keeps posting to a raw member id as configured", async () => {
    const runId = await startTestRun(t.db, "raw-id", { id: "evt_2", email: "maya@example.com", draft: "Hello" });
    const [a] = await q("SELECT id, slack FROM approvals WHERE run_id = $1", [runId]);
    expect(a.slack).toEqual({ connection: "slack", channel: "U0SAM" });
    expect(await notifyApproval(t.db, { orgId, approvalId: a.id }, { log, publicUrl: null, worker: "w" })).toBe("posted");
    expect(slack.messages.at(-1)?.channel).toBe("DU0SAM");
  });

  it("no approver linked: asked in the inbox only, and the timeline says why", async () => {
    const runId = await startTestRun(t.db, "unlinked", { id: "evt_3", email: "maya@example.com", draft: "Hello" });
    const [a] = await q("SELECT slack, notify_state FROM approvals WHERE run_id = $1", [runId]);
    expect(a).toEqual({ slack: null, notify_state: "none" });
    const [e] = await q("SELECT data->>'slackSkipped' AS why FROM run_events WHERE run_id = $1 AND type = 'approval.requested'", [runId]);
    expect(e.why).toMatch(/no approver has a linked Slack user/);
  });
});
