import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inTx } from "@holdfast/db";
import { lanes } from "../src/base/catalog";
import { createLogger } from "../src/base/log";
import { createConnection } from "../src/providers/connections/connect";
import { advanceRun } from "../src/run/engine/advance";
import { buildStory, type StoryInput } from "../src/run/runs/story";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { staleWakeups } from "../src/run/sweeper/services";
import { skipTestWait } from "../src/run/test-runs/actions";
import { playTestRun, testRunState } from "../src/run/test-runs/play";
import { testScript } from "../src/run/test-runs/script";
import { runEventsForRun } from "../src/store/sql/run-events";
import { stepsViewOfRun } from "../src/store/sql/steps-view";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Quiet hours with the real engine (issue 44): the send step's worker defers a send due outside the window to the
 * next opening in the contact's zone (available_at by the database), says so on the run's story, and sends nothing;
 * the step is taken again at its instant even when its queue job is lost (the sweeper's stale wake-ups); a test run
 * holds on its virtual clock and "Skip to then" / "Play to the end" send (simulated, nothing reaches the SMTP sink).
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId = "";
let automationId = "";
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget({ credentials: { user: "sam", pass: "right" } });
  const graph = parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id", contactEmailField: "email" } },
      { id: "send", kind: "send_email", config: { connection: "mailbox", subject: "Hello", text: "Hi there" } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "send" },
      { from: "send", to: "e" },
    ],
  });
  ({ orgId } = await publish(t.db, graph, { automation: "quiet" }));
  automationId = (await rows("SELECT id FROM automations WHERE org_id = $1 AND slug = 'quiet'", [orgId]))[0].id;
  await createConnection(t.db, { orgId, kind: "smtp", name: "mailbox", config: { host: "127.0.0.1", port: smtp.port, tls: "none", user: "sam", from: "Acme <hello@acme.test>" }, secret: "right" });
  await t.sql.query("INSERT INTO contacts (org_id, email, time_zone, consent) VALUES ($1, 'maya@example.com', 'Europe/Paris', 'granted')", [orgId]);
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });
const setOrgQuietHours = (w: unknown) =>
  rows("INSERT INTO sending_rules (org_id, quiet_hours) VALUES ($1, $2) ON CONFLICT (org_id) DO UPDATE SET quiet_hours = EXCLUDED.quiet_hours", [orgId, JSON.stringify(w)]);
const setAutomationQuietHours = (w: unknown) => rows("UPDATE automations SET quiet_hours = $2 WHERE id = $1", [automationId, w === null ? null : JSON.stringify(w)]);
const dbNow = async () => (await rows("SELECT now() AS now"))[0].now as Date;

async function start(email: string, test?: { clockStartsAt: Date }) {
  const input = { id: `q${++n}`, email };
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "quiet",
    rawBody: JSON.stringify(input),
    body: input,
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
    ...(test ? { test: { by: "user:sam@acme.test", script: testScript.parse({}), sendTo: null, clockStartsAt: test.clockStartsAt } } : {}),
  });
  return runId;
}

/** Runs the run's due ready steps on this process's worker, then walks what settled. */
async function drive(runId: string) {
  for (const s of await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready' AND available_at <= now() ORDER BY created_at", [runId])) await runner().run(s.id);
  await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" }, "test").catch(() => {});
}

const sendStep = async (runId: string) => (await rows("SELECT id, status, available_at, attempt, output FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]))[0];
const holdsOf = async (runId: string) => (await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'step.deferred' ORDER BY id", [runId])).map((r) => r.data);

async function story(runId: string, contactZone: string | null) {
  const [steps, timeline] = await inTx(t.db, async (tx) => [await stepsViewOfRun(tx, orgId, runId), await runEventsForRun(tx, orgId, runId)] as const);
  const [run] = await rows(`SELECT id, status, input, error, cancel_requested_at AS "cancelRequestedAt", cancel_reason AS "cancelReason", created_at AS "createdAt", finished_at AS "finishedAt" FROM runs WHERE id = $1`, [runId]);
  const input = { run, steps, timeline, timers: [], approvals: [], signals: [], graph: null, contact: { email: "x@example.com", timeZone: contactZone }, viewerZone: "America/Los_Angeles" };
  return buildStory(input as unknown as StoryInput).sentences.map((s) => s.text);
}

/** "Sat 5 Dec 08:00": how the story writes an instant in a zone, whoever reads it. */
const localWords = (at: DateTime) => at.setLocale("en-GB").toFormat("ccc d LLL HH:mm");

describe("quiet hours on a real run", () => {
  it("a send outside the window is deferred to the opening in the contact's zone, says so, and sends nothing", async () => {
    // The window is open only on the day after tomorrow (Paris): now is outside it whatever the hour.
    const paris = DateTime.fromJSDate(await dbNow(), { zone: "Europe/Paris" });
    const day = paris.plus({ days: 2 });
    const opening = day.set({ hour: 8, minute: 0, second: 0, millisecond: 0 });
    await setOrgQuietHours({ days: [day.weekday], start: "08:00", end: "20:00", spreadMinutes: 0 });
    const runId = await start("maya@example.com");
    await drive(runId);

    const step = await sendStep(runId);
    expect(step.status).toBe("ready");
    expect(step.output).toBeNull();
    // available_at is the database's now() at the settle plus (opening - now() at the check): the opening, give or
    // take the moments between the two statements.
    const drift = step.available_at.getTime() - opening.toMillis();
    expect(drift).toBeGreaterThanOrEqual(0);
    expect(drift).toBeLessThan(2_000);
    const words = `quiet hours: sends go out ${day.setLocale("en-GB").toFormat("ccc")} 08:00-20:00`;
    expect(await holdsOf(runId)).toEqual([
      {
        reason: `${words}; held until ${opening.toUTC().toISO({ suppressMilliseconds: false })} (Europe/Paris)`,
        delayMs: expect.any(Number),
        hold: { rule: "quiet_hours", until: opening.toUTC().toISO(), zone: "Europe/Paris", zoneSource: "the contact's stored time zone", words },
      },
    ]);
    expect(await story(runId, "Europe/Paris")).toContain(`Email held until ${localWords(opening)} in the contact's zone (Europe/Paris): ${words}`);
    // Not due: no worker takes it, the sweeper does not wake it, nothing was sent.
    await runner().run(step.id);
    expect(await staleWakeups.make({ staleSeconds: 1 }).runOnce({ db: t.db, actor: "sweeper", graphs, systemMail: null })).toEqual({ rewoken: 0, steps: [] });
    expect((await sendStep(runId)).status).toBe("ready");
    expect(smtp.received).toHaveLength(0);
  });

  it("the automation's override wins: off sends at once; its own window holds by its own hours", async () => {
    await setAutomationQuietHours({ off: true });
    const free = await start("maya@example.com");
    await drive(free);
    expect((await sendStep(free)).status).toBe("done");
    expect(smtp.received).toHaveLength(1);

    const paris = DateTime.fromJSDate(await dbNow(), { zone: "Europe/Paris" });
    const day = paris.plus({ days: 3 });
    await setAutomationQuietHours({ days: [day.weekday], start: "09:30", end: "10:00", spreadMinutes: 0 });
    const own = await start("maya@example.com");
    await drive(own);
    expect((await holdsOf(own))[0].hold.until).toBe(day.set({ hour: 9, minute: 30, second: 0, millisecond: 0 }).toUTC().toISO());
    expect(smtp.received).toHaveLength(1);
    await setAutomationQuietHours(null);
  });

  it("a contact with no stored zone is held in the window's zone for contacts without one", async () => {
    const ny = DateTime.fromJSDate(await dbNow(), { zone: "America/New_York" });
    const day = ny.plus({ days: 2 });
    await setOrgQuietHours({ days: [day.weekday], start: "08:00", end: "20:00", spreadMinutes: 0, zone: "America/New_York" });
    const runId = await start("nozone@example.com");
    await drive(runId);
    expect((await holdsOf(runId))[0].hold).toMatchObject({
      zone: "America/New_York",
      zoneSource: "the quiet hours' zone for contacts without one",
      until: day.set({ hour: 8, minute: 0, second: 0, millisecond: 0 }).toUTC().toISO(),
    });
    expect(smtp.received).toHaveLength(1); // only the earlier test's send
  });

  it("a held step is taken again at its instant even when its queue job is lost (the sweeper's stale wake-ups)", { timeout: 120_000 }, async () => {
    // A window opening at the next minute in UTC (the contact has no zone): a real wait of under a minute.
    const now = DateTime.fromJSDate(await dbNow(), { zone: "UTC" });
    const opens = now.plus({ minutes: now.second > 50 ? 2 : 1 }).startOf("minute");
    const end = opens.hour === 23 && opens.minute === 59 ? "24:00" : opens.plus({ minutes: 1 }).toFormat("HH:mm");
    await setOrgQuietHours({ days: [1, 2, 3, 4, 5, 6, 7], start: opens.toFormat("HH:mm"), end, spreadMinutes: 0 });
    const runId = await start("lee@example.com");
    await drive(runId);
    const held = await sendStep(runId);
    expect(held.status).toBe("ready");
    expect((await holdsOf(runId))[0].hold).toMatchObject({ zone: "UTC", zoneSource: "no time zone is known for the contact" });
    // The delayed wake-up is lost (Redis restarted, the job dropped): every outbox row counts as sent.
    await rows("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    const sweeper = staleWakeups.make({ staleSeconds: 1 });
    const ctx = { db: t.db, actor: "sweeper", graphs, systemMail: null };
    // Before its instant the sweeper leaves it; once due (past the stale interval) it wakes it.
    while ((await dbNow()).getTime() < held.available_at.getTime() - 500) {
      expect((await sweeper.runOnce(ctx)).steps.map((s) => s.stepId)).not.toContain(held.id);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    while ((await dbNow()).getTime() < held.available_at.getTime() + 1_200) await new Promise((r) => setTimeout(r, 200));
    expect((await sweeper.runOnce(ctx)).steps.map((s) => s.stepId)).toContain(held.id);
    expect(await rows("SELECT payload->>'stepId' AS step FROM outbox WHERE sent_at IS NULL AND topic = 'step.ready'")).toEqual([{ step: held.id }]);
    await drive(runId);
    expect((await sendStep(runId)).status).toBe("done");
    expect(smtp.received.filter((m) => m.to.includes("lee@example.com"))).toHaveLength(1);
    expect((await story(runId, null)).join("\n")).toMatch(new RegExp(`; it was held until \\w+ \\d+ \\w+ ${opens.toFormat("HH:mm")} UTC \\(no time zone is known for the contact\\): quiet hours`));
  });
});

describe("quiet hours on a test run's virtual clock", () => {
  /** The next 22:00 in Paris at least an hour ahead of the database's now: where the test run's clock starts. */
  async function tenPm() {
    const paris = DateTime.fromJSDate(await dbNow(), { zone: "Europe/Paris" }).plus({ hours: 1 });
    const at = paris.set({ hour: 22, minute: 0, second: 0, millisecond: 0 });
    return at < paris ? at.plus({ days: 1 }) : at;
  }

  it("a send at 22:00 contact time holds to 08:00 the next day on the virtual clock; Skip to then sends it (simulated)", async () => {
    await setOrgQuietHours({ days: [1, 2, 3, 4, 5, 6, 7], start: "08:00", end: "20:00", spreadMinutes: 30 });
    const ten = await tenPm();
    const next8 = ten.plus({ days: 1 }).set({ hour: 8 });
    const received = smtp.received.length;
    const runId = await start("maya@example.com", { clockStartsAt: ten.toJSDate() });
    await drive(runId);
    const [hold] = (await holdsOf(runId)).map((d) => d.hold);
    const until = DateTime.fromISO(hold.until, { zone: "Europe/Paris" });
    expect(until >= next8 && until < next8.plus({ minutes: 30 })).toBe(true);
    expect(hold).toMatchObject({ rule: "quiet_hours", zone: "Europe/Paris" });
    const state = await testRunState(t.db, orgId, runId);
    expect(state.waiting).toEqual([
      { kind: "held", stepId: expect.any(String), nodeId: "send", rule: "quiet_hours", until: until.toJSDate(), zone: "Europe/Paris", words: expect.stringMatching(/^quiet hours: /) },
    ]);
    const skip = { orgId, runId, stepId: state.waiting[0]?.stepId as string, by: "user:sam@acme.test" };
    const [first, again] = await Promise.all([skipTestWait(t.db, graphs, skip), skipTestWait(t.db, graphs, skip)]);
    expect([first.kind, again.kind].sort()).toEqual(["already", "skipped"]);
    const virtual = (await testRunState(t.db, orgId, runId)).virtualNow.getTime();
    expect(Math.abs(virtual - until.toMillis())).toBeLessThan(2_000);
    await drive(runId);
    const sent = await sendStep(runId);
    expect(sent.status).toBe("done");
    expect(sent.output).toMatchObject({ simulated: true, to: "maya@example.com" });
    expect(smtp.received).toHaveLength(received);
    expect(await rows("SELECT type FROM run_events WHERE run_id = $1 AND type = 'test.skipped'", [runId])).toHaveLength(1);
  });

  it("across the spring change in the contact's zone: Sat 27 Mar 2027 22:00 CET holds to Sun 08:00 CEST (06:00Z)", async () => {
    await setOrgQuietHours({ days: [1, 2, 3, 4, 5, 6, 7], start: "08:00", end: "20:00", spreadMinutes: 0 });
    const ten = DateTime.fromISO("2027-03-27T22:00", { zone: "Europe/Paris" });
    const runId = await start("maya@example.com", { clockStartsAt: ten.toJSDate() });
    await drive(runId);
    const [hold] = (await holdsOf(runId)).map((d) => d.hold);
    expect(hold).toMatchObject({ rule: "quiet_hours", zone: "Europe/Paris" });
    // Ten wall-clock hours later in Paris, but nine real ones: the night lost an hour at 02:00.
    expect(new Date(hold.until).toISOString()).toBe("2027-03-28T06:00:00.000Z");
    expect((new Date(hold.until).getTime() - ten.toMillis()) / 3_600_000).toBe(9);
  });

  it("Play to the end skips the hold too", { timeout: 60_000 }, async () => {
    const received = smtp.received.length;
    const runId = await start("maya@example.com", { clockStartsAt: (await tenPm()).toJSDate() });
    // The workers' part, as the lane workers would do it while play goes.
    let playing = true;
    const worker = (async () => {
      while (playing) {
        await drive(runId);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const played = await playTestRun(t.db, graphs, { orgId, orgSlug: "acme", runId, by: "user:sam@acme.test", budgetMs: 30_000 });
    playing = false;
    await worker;
    expect(played).toMatchObject({ status: "completed", finished: true });
    expect(played.done).toEqual([expect.stringMatching(/^Skipped the send held by quiet hours at "send" to /)]);
    expect(smtp.received).toHaveLength(received);
  });
});
