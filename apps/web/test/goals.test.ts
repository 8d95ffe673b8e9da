import { createLogger, lanes } from "@holdfast/core/base";
import { ingestEmailReply, runMeetsGoal, sessionUser, signIn } from "@holdfast/core/people";
import { createConnection } from "@holdfast/core/providers";
import { advanceRun, goalSettings, journeyCounts, setGoal, signPayload, StepRunner, startRun, testScript } from "@holdfast/core/run";
import { GraphCache, triggerSettings } from "@holdfast/core/versions";
import { addMember, approvalGraph, createTestDatabase, testPassword, lineGraph, publish, replyGraph, type SmtpTarget, startSmtpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleGoal } from "../src/server/goals";
import { createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/**
 * Goals (issue 43): a goal met for a contact ends its runs of the automation as converted at their next safe point:
 * at once for a run at a wait or waiting for an approval, after the send settles for a run whose email is in flight.
 * Driven through the goal URL's handler (as the route calls it), the engine's walk (advanceRun, as the engine takes
 * each run.wake) and a lane worker's StepRunner, on this file's own database and real SMTP servers.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let slow: SmtpTarget;
let orgId = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const waitThenSend = lineGraph(
  { id: "t", kind: "trigger", config: { eventIdField: "id" } },
  { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 } } },
  { id: "send", kind: "send_email", config: { connection: "mail", subject: "Hi", text: "Hello" } },
  { id: "done", kind: "end" },
);
const sendThenWait = lineGraph(
  { id: "t", kind: "trigger", config: { eventIdField: "id" } },
  { id: "send", kind: "send_email", config: { connection: "slow", subject: "Welcome", text: "Hello" } },
  { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 } } },
  { id: "done", kind: "end" },
);

const ids: Record<string, string> = {};
beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  // Holds its final answer: a send to it is in flight (claimed, its effect leased) for that long.
  slow = await startSmtpTarget({ replyDelayMs: 2_000 });
  const v1 = await publish(t.db, waitThenSend, { automation: "nurture" });
  orgId = v1.orgId;
  ids.nurture = v1.automationId;
  await addMember(t.db, orgId, "sam@acme.test", "Sam", "owner"); // the approval's approver
  ids.sender = (await publish(t.db, sendThenWait, { automation: "sender" })).automationId;
  ids.replies = (await publish(t.db, replyGraph(), { automation: "replies" })).automationId;
  ids.clicks = (await publish(t.db, waitThenSend, { automation: "clicks" })).automationId;
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
  await createConnection(t.db, { orgId, kind: "smtp", name: "slow", config: { host: "127.0.0.1", port: slow.port, tls: "none", from: "sam@acme.test" }, secret: null });
  await setGoal(t.db, orgId, ids.nurture as string, "event");
  await setGoal(t.db, orgId, ids.sender as string, "event");
  await setGoal(t.db, orgId, ids.replies as string, "replied");
  await setGoal(t.db, orgId, ids.clicks as string, "clicked");
}, 60_000);
afterAll(async () => {
  await Promise.all([smtp?.close(), slow?.close()]);
  await t?.drop();
});

// `draft`: what version 2's approval of "nurture" shows the approver.
const start = (automation: string, email: string) => startTestRun(t.db, automation, { id: `e${++n}`, email, draft: "Welcome aboard" });

/** A delivery to the automation's goal URL, signed with its goal secret (or `secret`), answered as the route does. */
async function goal(automation: string, body: unknown, o: { webhookId?: string; secret?: string | null } = {}) {
  const raw = JSON.stringify(body);
  const id = o.webhookId ?? `msg_${++n}`;
  const at = Math.floor(Date.now() / 1000);
  const secret = o.secret === undefined ? (await goalSettings(t.db, orgId, ids[automation] as string)).signingSecret : o.secret;
  const headers: Record<string, string> = { "content-type": "application/json", "webhook-id": id };
  if (secret) Object.assign(headers, { "webhook-timestamp": String(at), "webhook-signature": signPayload(secret, id, at, raw) });
  const response = await handleGoal(t.db, { orgSlug: "acme", automationSlug: automation }, new Request(`http://localhost/api/goals/acme/${automation}`, { method: "POST", headers, body: raw }));
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** The engine: every unsent run.wake of these runs walked, as the engine takes them off its queue. */
async function engine(runIds: string[]) {
  const wakes = await rows("SELECT DISTINCT run_id FROM outbox WHERE topic = 'run.wake' AND run_id = ANY($1)", [runIds]);
  for (const w of wakes) await advanceRun(t.db, graphs, { orgId, runId: w.run_id, reason: "cancel" });
}

const statusOf = async (runId: string) => (await rows("SELECT status, goal_met FROM runs WHERE id = $1", [runId]))[0];
const changes = async () =>
  (await rows("SELECT (SELECT count(*) FROM run_events)::int AS events, (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM goal_events)::int AS goals, (SELECT count(*) FROM runs WHERE status <> 'running' OR cancel_requested_at IS NOT NULL)::int AS ending"))[0];

describe("a goal event on the automation's goal URL", () => {
  let atWait = "";
  let atApproval = "";
  let other = "";
  let testRun = "";

  it("ends the contact's runs at a wait and at an approval as converted; other contacts' runs and test runs are untouched", async () => {
    atWait = await start("nurture", "maya@example.com");
    other = await start("nurture", "kim@example.com");
    // Version 2 asks for an approval: a run of it waits for a person.
    await publish(t.db, approvalGraph(), { automation: "nurture" });
    atApproval = await start("nurture", "maya@example.com");
    const input = { id: `e${++n}`, email: "maya@example.com", draft: "Welcome aboard" };
    testRun = (
      await startRun(t.db, {
        orgSlug: "acme",
        automationSlug: "nurture",
        rawBody: JSON.stringify(input),
        body: input,
        headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
        via: "test",
        auth: { kind: "operator" },
        test: { by: "user:sam@acme.test", script: testScript.parse({}) },
      })
    ).runId;
    expect(await rows("SELECT node_id, status FROM steps WHERE run_id = ANY($1) ORDER BY node_id", [[atWait, atApproval]])).toEqual([
      { node_id: "pause", status: "waiting" },
      { node_id: "review", status: "waiting" },
    ]);
    expect(await rows("SELECT status FROM approvals WHERE run_id = $1", [atApproval])).toEqual([{ status: "pending" }]);

    const res = await goal("nurture", { email: "Maya@Example.com", event: "became a customer" }, { webhookId: "crm_1" });
    expect(res).toEqual({ status: 202, json: { converted: true, runsEnding: 2 } });
    await engine([atWait, atApproval, other, testRun]);

    for (const runId of [atWait, atApproval]) {
      expect(await statusOf(runId)).toEqual({ status: "converted", goal_met: "event" });
      expect(await rows("SELECT status FROM steps WHERE run_id = $1", [runId])).toEqual([{ status: "cancelled" }]);
      const timeline = await rows("SELECT type, data FROM run_events WHERE run_id = $1 AND type IN ('run.goal_met', 'run.converted') ORDER BY id", [runId]);
      expect(timeline).toEqual([
        { type: "run.goal_met", data: { goal: "event" } },
        { type: "run.converted", data: { goal: "event", closedSteps: 1 } },
      ]);
    }
    expect(await rows("SELECT status FROM approvals WHERE run_id = $1", [atApproval])).toEqual([{ status: "cancelled" }]);
    // Kim's run and Maya's test run go on as they were.
    expect(await statusOf(other)).toEqual({ status: "running", goal_met: null });
    expect(await rows("SELECT status FROM steps WHERE run_id = $1", [other])).toEqual([{ status: "waiting" }]);
    expect(await statusOf(testRun)).toEqual({ status: "running", goal_met: null });
    expect(await rows("SELECT count(*)::int AS n FROM runs WHERE id = $1 AND cancel_requested_at IS NULL", [testRun])).toEqual([{ n: 1 }]);
    expect(await rows("SELECT goal, runs_ended FROM goal_events WHERE webhook_id = 'crm_1'")).toEqual([{ goal: "event", runs_ended: 2 }]);
  });

  it("counts conversions per version: converted / started on each", async () => {
    const { versions: byVersion } = await journeyCounts(t.db, { orgId, automationId: ids.nurture as string, versionId: null, window: "all" });
    expect(byVersion.map(({ version, started, converted }) => ({ version, started, converted }))).toEqual([
      { version: 2, started: 1, converted: 1 },
      { version: 1, started: 2, converted: 1 },
    ]);
  });

  it("a repeated delivery (same webhook-id) changes nothing", async () => {
    const again = await start("nurture", "maya@example.com"); // a new run since: a repeat must not end it
    const before = await changes();
    const res = await goal("nurture", { email: "maya@example.com" }, { webhookId: "crm_1" });
    expect(res).toEqual({ status: 200, json: { converted: true, duplicate: true } });
    expect(await changes()).toEqual(before);
    expect(await statusOf(again)).toEqual({ status: "running", goal_met: null });
  });

  it("refuses a delivery without the goal URL's credential (401), the start trigger's secret too, and changes nothing", async () => {
    const before = await changes();
    const unsigned = await goal("nurture", { email: "kim@example.com" }, { secret: null });
    // In the goal URL's words (its path, its own secret, where to copy it), never the start trigger's.
    expect(unsigned).toMatchObject({ status: 401, json: { error: { message: expect.stringContaining("this goal URL needs webhook-id") } } });
    const startSecret = (await triggerSettings(t.db, orgId, ids.nurture as string, "signed")).signingSecret;
    const wrong = await goal("nurture", { email: "kim@example.com" }, { secret: startSecret });
    expect(wrong).toMatchObject({ status: 401, json: { error: { code: "invalid_signature", message: expect.stringContaining("goal URL's secret") } } });
    const withToken = await handleGoal(t.db, { orgSlug: "acme", automationSlug: "nurture", token: "made-up" }, new Request("http://localhost/api/goals/acme/nurture/made-up", { method: "POST", body: "{}" }));
    const refusal = ((await withToken.json()) as { error: { message: string } }).error.message;
    expect(refusal).toContain("/api/goals/{org}/{automation}");
    expect(refusal).not.toMatch(/hooks|trigger/);
    expect(await changes()).toEqual(before);
    expect(await statusOf(other)).toEqual({ status: "running", goal_met: null });
  });

  it("refuses a goal event for an automation whose goal is another one (409)", async () => {
    const res = await goal("replies", { email: "kim@example.com" }, { secret: (await goalSettingsOrMake("replies")).signingSecret });
    expect(res).toMatchObject({ status: 409, json: { error: { code: "goal_not_event" } } });
  });
});

/** Goal credentials exist once a goal was a goal event: made by switching to it and back. */
async function goalSettingsOrMake(automation: string) {
  const id = ids[automation] as string;
  const before = await goalSettings(t.db, orgId, id);
  await setGoal(t.db, orgId, id, "event");
  await setGoal(t.db, orgId, id, before.goal);
  return goalSettings(t.db, orgId, id);
}

describe("a goal met while the run's email is being sent", () => {
  it("ends the run only after the send settles, as converted, the email sent once", async () => {
    const runId = await start("sender", "maya@example.com");
    const [send] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });
    const sending = runner.run(send.id);
    await expect.poll(() => slow.received.length).toBe(1); // the message is with the server, its answer held

    expect(await goal("sender", { email: "maya@example.com" })).toEqual({ status: 202, json: { converted: true, runsEnding: 1 } });
    await engine([runId]);
    // Not inside the send: the step is still running under its lease, the run still running.
    expect(await statusOf(runId)).toEqual({ status: "running", goal_met: "event" });
    expect(await rows("SELECT status FROM steps WHERE run_id = $1", [runId])).toEqual([{ status: "running" }]);

    expect((await sending).kind).toBe("settled");
    await engine([runId]);
    expect(await statusOf(runId)).toEqual({ status: "converted", goal_met: "event" });
    // The send settled done and nothing after it was scheduled; the email went out once.
    expect(await rows("SELECT node_id, status FROM steps WHERE run_id = $1", [runId])).toEqual([{ node_id: "send", status: "done" }]);
    expect(await rows("SELECT status FROM effects WHERE run_id = $1", [runId])).toEqual([{ status: "settled" }]);
    expect(slow.received.filter((m) => m.to.includes("maya@example.com"))).toHaveLength(1);
  });
});

describe("a reply as the goal", () => {
  it("ends the contact's runs of an automation whose goal is a reply, in the reply's transaction; other automations' runs go on", async () => {
    const runId = await start("replies", "lee@example.com");
    const elsewhere = await start("nurture", "lee@example.com");
    const [send] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    expect((await new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log }).run(send.id)).kind).toBe("settled");
    await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
    const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [send.id]);

    await ingestEmailReply(t.db, "acme", { messageId: `<r${++n}@mail.example.com>`, from: "Lee <lee@example.com>", subject: "Re: Hi", inReplyTo: output.messageId, text: "Yes please" });
    expect(await rows("SELECT goal, runs_ended FROM goal_events WHERE automation_id = $1", [ids.replies])).toEqual([{ goal: "replied", runs_ended: 1 }]);
    await engine([runId, elsewhere]);
    expect(await statusOf(runId)).toEqual({ status: "converted", goal_met: "replied" });
    expect(await statusOf(elsewhere)).toEqual({ status: "running", goal_met: null });
  });
});

describe("a click as the goal", () => {
  it("ends the run's contact's runs where the click is recorded (runMeetsGoal), only when the automation counts clicks", async () => {
    const clicked = await start("clicks", "ana@example.com");
    const replyRun = await start("replies", "ana@example.com");
    // A click on an email of a run whose automation counts replies: not its goal, nothing changes.
    expect(await t.db.$transaction((tx) => runMeetsGoal(tx, orgId, replyRun, "clicked"))).toBeNull();
    expect(await t.db.$transaction((tx) => runMeetsGoal(tx, orgId, clicked, "clicked"))).toEqual({ kind: "met", contactId: expect.any(String), runIds: [clicked] });
    await engine([clicked, replyRun]);
    expect(await statusOf(clicked)).toEqual({ status: "converted", goal_met: "clicked" });
    expect(await statusOf(replyRun)).toEqual({ status: "running", goal_met: null });
  });
});

describe("a new goal URL secret (the previous one leaked)", () => {
  it("is accepted at once; the previous one still works for its 24 hours until stopped, then is refused (401); a repeated stop changes nothing", async () => {
    const s = await signIn(t.db, "sam@acme.test", testPassword);
    const sam = createCallerFactory(appRouter)({ db: t.db, user: await sessionUser(t.db, s?.token) });
    const input = { orgSlug: "acme", automationId: ids.nurture as string };
    const old = (await sam.goals.get(input)).credential?.signingSecret as string;
    expect(old).toMatch(/^whsec_/);

    expect(await sam.goals.rotate({ ...input, kind: "signing_secret" })).toEqual({ rotated: "signing_secret" });
    const after = await sam.goals.get(input);
    const fresh = after.credential?.signingSecret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    expect(after.credential?.previous).toEqual([{ kind: "signing_secret", expiresAt: expect.any(Date) }]);
    // The overlap is the database's 24 hours, not the web's clock.
    const [overlap] = await rows("SELECT round(extract(epoch FROM expires_at - now()) / 3600)::int AS hours FROM trigger_credentials WHERE automation_id = $1 AND kind = 'goal_signing_secret' AND expires_at IS NOT NULL", [ids.nurture]);
    expect(overlap).toEqual({ hours: 24 });
    // The start trigger's secret is its own: renewing the goal's leaves it as it was.
    expect((await triggerSettings(t.db, orgId, ids.nurture as string, "signed")).previous).toEqual([]);

    expect((await goal("nurture", { email: "kim@example.com" }, { secret: fresh })).status).toBe(202);
    expect((await goal("nurture", { email: "kim@example.com" }, { secret: old })).status).toBe(202);

    expect(await sam.goals.revokePrevious({ ...input, kind: "signing_secret" })).toEqual({ revoked: 1 });
    const before = await changes();
    expect(await goal("nurture", { email: "kim@example.com" }, { secret: old })).toMatchObject({ status: 401, json: { error: { code: "invalid_signature" } } });
    expect(await changes()).toEqual(before);
    expect((await sam.goals.get(input)).credential?.previous).toEqual([]);
    // A second click on "Stop accepting it now" reads back that there was nothing left to stop.
    expect(await sam.goals.revokePrevious({ ...input, kind: "signing_secret" })).toEqual({ revoked: 0 });
    expect((await goal("nurture", { email: "kim@example.com" }, { secret: fresh })).status).toBe(202);
    expect((await goal("nurture", { email: "kim@example.com" }, { secret: old })).status).toBe(401);
  });

  it("is refused, in words, for an automation whose goal is not a goal event (it has no goal URL)", async () => {
    const s = await signIn(t.db, "sam@acme.test", testPassword);
    const sam = createCallerFactory(appRouter)({ db: t.db, user: await sessionUser(t.db, s?.token) });
    await expect(sam.goals.rotate({ orgSlug: "acme", automationId: ids.clicks as string, kind: "url_token" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "This automation has no goal URL: set its goal to a goal event first.",
    });
    expect(await rows("SELECT count(*)::int AS n FROM trigger_credentials WHERE automation_id = $1 AND kind LIKE 'goal_%'", [ids.clicks])).toEqual([{ n: 0 }]);
  });
});
