import { createDb, createListenClient, type Db } from "@holdfast/db";
import { createPublisher, createWakePublisher, queueNames, subscribeReady } from "@holdfast/queue";
import { createTestDatabase, createTestPrefix, httpChainGraph, publish, type TestDatabase, testRedisUrl } from "@holdfast/testkit";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicationsOf } from "../src/run/relay/publications";
import { relayOnce } from "../src/run/relay/relay";
import { startRun } from "../src/run/start/start-run";

let t: TestDatabase;
const prefix = createTestPrefix();
const publisher = () => createPublisher({ redis: testRedisUrl, prefix: prefix.prefix });

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, httpChainGraph("http://127.0.0.1:9/x", 1));
});
afterAll(async () => {
  await prefix.clear();
  await t?.drop();
});

const start = (key: string, options: Parameters<typeof startRun>[2] = {}, on: Db = t.db, delivery = false) =>
  startRun(
    on,
    {
      orgSlug: "acme",
      automationSlug: "flow",
      rawBody: "{}",
      body: {},
      headers: { "webhook-id": key, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
      // As a request to the trigger URL: the start's statement is the delivery's (store/sql/trigger-deliveries.ts).
      ...(delivery ? { delivery: { contentType: "application/json", bodyBytes: 2 } } : {}),
    },
    options,
  );

describe("the outbox's notifications", () => {
  it("tell a lane of its due step.ready rows on its own channel and the relay nothing (the lane's workers take them); the relay hears 'now' of any other due row", async () => {
    const listener = createListenClient(t.url, "test-listen");
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (m) => heard.push(`${m.channel}:${m.payload ?? ""}`));
    await listener.query("LISTEN holdfast_outbox; LISTEN holdfast_ready_io");
    const until = async (n: number) => {
      for (let i = 0; i < 100 && heard.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    };
    await start("notify-1"); // the run's first step.ready, on the io lane
    await until(1);
    await new Promise((r) => setTimeout(r, 200)); // time for a notification the relay should not get
    expect(heard).toEqual(["holdfast_ready_io:"]);
    heard.length = 0;
    await t.sql.query("INSERT INTO outbox (org_id, topic, payload) SELECT org_id, 'run.wake', jsonb_build_object('runId', id, 'orgId', org_id) FROM runs LIMIT 1");
    await until(1);
    expect(heard).toEqual(["holdfast_outbox:now"]);
    heard.length = 0;
    // A delayed row wakes nobody: the relay's poll finds it when it comes due.
    await t.sql.query("INSERT INTO outbox (org_id, topic, payload, available_at) SELECT org_id, 'run.wake', '{}'::jsonb, now() + interval '1 hour' FROM runs LIMIT 1");
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual([]);
    await listener.end();
    await t.sql.query("DELETE FROM outbox");
  });
});

describe("first steps announced on Redis (queue/wake.ts)", () => {
  it("a start with a connected publisher sends no NOTIFY and announces its lane on Redis after the commit; without one, or while it is not connected, the trigger NOTIFYs", async () => {
    const listener = createListenClient(t.url, "test-listen");
    await listener.connect();
    const notified: string[] = [];
    listener.on("notification", (m) => notified.push(m.channel));
    await listener.query("LISTEN holdfast_outbox; LISTEN holdfast_ready_io");
    const announced: string[] = [];
    let subscribed!: () => void;
    const ready = new Promise<void>((r) => (subscribed = r));
    const sub = subscribeReady({ redis: testRedisUrl, prefix: prefix.prefix }, ["io", "human"], (lane) => (lane ? announced.push(lane) : subscribed()));
    await ready;
    const wake = createWakePublisher({ redis: testRedisUrl, prefix: prefix.prefix });
    expect(await wake.whenConnected(5_000)).toBe(true);
    const settle = () => new Promise((r) => setTimeout(r, 300));

    // One connection, so the next start below runs on the very connection this one set holdfast.ready_wake on.
    const one = createDb(t.url, { poolSize: 1, applicationName: "test-one" });
    const { runId } = await start("bus-1", { wake }, one);
    await settle();
    expect(notified).toEqual([]);
    expect(announced).toEqual(["io"]);
    // The step.ready row is in the outbox all the same: the relay's poll delivers it if the announcement is lost.
    expect((await t.sql.query("SELECT count(*)::int AS n FROM outbox WHERE run_id = $1 AND topic = 'step.ready' AND sent_at IS NULL", [runId])).rows).toEqual([{ n: 1 }]);
    // The setting lasts only the start's transaction: the next statement on that connection notifies again.
    await start("notify-2", {}, one);
    await settle();
    expect(notified).toEqual(["holdfast_ready_io"]);
    await one.$disconnect();
    // A request to the trigger URL (the delivery's statement, the webhook route's): the same.
    notified.length = 0;
    announced.length = 0;
    await start("bus-delivery", { wake }, t.db, true);
    await settle();
    expect(notified).toEqual([]);
    expect(announced).toEqual(["io"]);
    expect((await t.sql.query("SELECT outcome FROM trigger_deliveries WHERE start_key LIKE '%bus-delivery'")).rows).toEqual([{ outcome: "accepted" }]);
    notified.length = 0;
    // A repeated delivery starts nothing and announces nothing.
    announced.length = 0;
    expect((await start("bus-1", { wake })).duplicate).toBe(true);
    await settle();
    expect(announced).toEqual([]);
    // A publisher that is not connected (Redis away): the start NOTIFYs instead.
    notified.length = 0;
    await start("bus-2", { wake: { connected: false, ready: () => announced.push("published while away") } });
    await settle();
    expect(notified).toEqual(["holdfast_ready_io"]);
    expect(announced).toEqual([]);
    await wake.close();
    await sub.close();
    await listener.end();
    await t.sql.query("DELETE FROM outbox");
  });
});

describe("the outbox relay", () => {
  it("publishes each unsent row once with a job id from the row, marks it sent, and a repeat publishes nothing", async () => {
    const runs = await Promise.all(["a", "b", "c"].map((k) => start(k)));
    const p = publisher();
    expect(await relayOnce(t.db, p, 2)).toEqual({ published: 2 });
    expect(await relayOnce(t.db, p, 2)).toEqual({ published: 1 });
    expect(await relayOnce(t.db, p, 2)).toEqual({ published: 0 });
    await p.close();
    // A start's first walk commits with it, so its wake-up is the first step's step.ready on its lane.
    const queue = new Queue(queueNames.lane("io"), { connection: { url: testRedisUrl }, prefix: prefix.prefix });
    const jobs = await queue.getJobs(["waiting"]);
    expect(jobs.map((j) => j.data.runId).sort()).toEqual(runs.map((r) => r.runId).sort());
    // The outbox id alone repeats after a database reset while Redis still remembers old job ids.
    for (const job of jobs) expect(job.id).toMatch(/^obx_\d+_\d{16}$/);
    await queue.close();
  });

  it("publishes the timer.due rows of a batch due at one instant as one timers.due job (when, and for how many) until then, a lone one as its own job, and a batch published again as the same job", async () => {
    await t.sql.query("DELETE FROM outbox");
    const [{ orgId, runId, at, later }] = (
      await t.sql.query(
        `SELECT org_id AS "orgId", id AS "runId", to_jsonb(now() + interval '1 hour') #>> '{}' AS at, to_jsonb(now() + interval '2 hours') #>> '{}' AS later
         FROM runs LIMIT 1`,
      )
    ).rows;
    const due = (timerId: string, dueAt: string, wake = 1) => ({ orgId, runId, timerId, wake, dueAt });
    const together = [due("tmr_a", at), due("tmr_b", at, 2), due("tmr_c", at)];
    for (const payload of [...together, due("tmr_d", later)]) {
      await t.sql.query("INSERT INTO outbox (org_id, run_id, topic, payload) VALUES ($1, $2, 'timer.due', $3)", [orgId, runId, payload]);
    }
    await t.sql.query("INSERT INTO outbox (org_id, run_id, topic, payload) VALUES ($1, $2, 'run.wake', $3)", [orgId, runId, { orgId, runId, reason: "sweep" }]);
    const p = publisher();
    expect(await relayOnce(t.db, p, 10)).toEqual({ published: 5 });
    const queue = new Queue(queueNames.engine, { connection: { url: testRedisUrl }, prefix: prefix.prefix });
    const delayed = await queue.getJobs(["delayed"]);
    const group = delayed.find((j) => j.name === "timers.due");
    expect(group?.data).toEqual({ dueAt: at, timers: 3 });
    expect(group?.id).toMatch(/^tmrs_[\w-]{32}$/);
    // Delayed until the instant (by the database clock: about an hour), the lone timer's until its own.
    expect(group?.opts.delay).toBeGreaterThan(3_500_000);
    expect(group?.opts.delay).toBeLessThanOrEqual(3_600_000);
    const lone = delayed.find((j) => j.name === "timer.due");
    expect(lone?.id).toBe("tmr_d_1");
    expect(lone?.data).toEqual(due("tmr_d", later));
    expect(lone?.opts.delay).toBeGreaterThan(7_100_000);
    expect((await queue.getJobs(["waiting"])).filter((j) => j.name === "run.wake")).toHaveLength(1);
    // A crash between the publish and the commit: the same rows published again are the same jobs (the ids suppress them).
    await t.sql.query("UPDATE outbox SET sent_at = NULL");
    expect(await relayOnce(t.db, p, 10)).toEqual({ published: 5 });
    expect((await queue.getJobs(["delayed"])).map((j) => j.id).sort()).toEqual(delayed.map((j) => j.id).sort());
    await p.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await t.sql.query("DELETE FROM outbox");
  });

  it("groups by instant whatever the rows' order (the same job id), and publishes a timer.due row without a payload as its own job", () => {
    const row = (timerId: string, dueAt: string) => ({ id: 1n, topic: "timer.due", jobId: `${timerId}_1`, delayMs: 1_000, payload: { orgId: "o", runId: "r", timerId, wake: 1, dueAt } });
    const at = "2026-12-07T09:00:00+00:00";
    const [ab] = publicationsOf([row("a", at), row("b", at)]);
    const [ba] = publicationsOf([row("b", at), row("a", at)]);
    expect(ab?.options.jobId).toBe(ba?.options.jobId);
    expect(ab?.data).toEqual({ dueAt: at, timers: 2 });
    const odd = publicationsOf([{ id: 2n, topic: "timer.due", jobId: "obx_2", delayMs: 0, payload: null }]);
    expect(odd.map((p) => [p.name, p.options.jobId])).toEqual([["timer.due", "obx_2"]]);
  });

  it("leaves rows unsent when publishing fails, so nothing is lost", async () => {
    await start("d");
    const broken = { publish: async () => Promise.reject(new Error("redis down")), publishMany: async () => Promise.reject(new Error("redis down")), close: async () => {} };
    await expect(relayOnce(t.db, broken, 10)).rejects.toThrow(/redis down/);
    const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL");
    expect(rows[0].n).toBe(1);
  });
});
