import { createListenClient } from "@holdfast/db";
import { createPublisher } from "@holdfast/queue";
import { createTestDatabase, createTestPrefix, httpChainGraph, publish, type TestDatabase, testRedisUrl } from "@holdfast/testkit";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { relayOnce } from "../src/relay/relay";
import { startRun } from "../src/start/start-run";

let t: TestDatabase;
const prefix = createTestPrefix();
const publisher = () => createPublisher({ redisUrl: testRedisUrl, prefix: prefix.prefix });

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, httpChainGraph("http://127.0.0.1:9/x", 1));
});
afterAll(async () => {
  await prefix.clear();
  await t?.drop();
});

const start = (key: string) =>
  startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "flow",
    rawBody: "{}",
    body: {},
    headers: { "webhook-id": key, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });

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

describe("the outbox relay", () => {
  it("publishes each unsent row once with a job id from the row, marks it sent, and a repeat publishes nothing", async () => {
    const runs = await Promise.all(["a", "b", "c"].map(start));
    const p = publisher();
    expect(await relayOnce(t.db, p, 2)).toEqual({ published: 2 });
    expect(await relayOnce(t.db, p, 2)).toEqual({ published: 1 });
    expect(await relayOnce(t.db, p, 2)).toEqual({ published: 0 });
    await p.close();
    // A start's first walk commits with it, so its wake-up is the first step's step.ready on its lane.
    const queue = new Queue("lane-io", { connection: { url: testRedisUrl }, prefix: prefix.prefix });
    const jobs = await queue.getJobs(["waiting"]);
    expect(jobs.map((j) => j.data.runId).sort()).toEqual(runs.map((r) => r.runId).sort());
    // The outbox id alone repeats after a database reset while Redis still remembers old job ids.
    for (const job of jobs) expect(job.id).toMatch(/^obx_\d+_\d{16}$/);
    await queue.close();
  });

  it("leaves rows unsent when publishing fails, so nothing is lost", async () => {
    await start("d");
    const broken = { publish: async () => Promise.reject(new Error("redis down")), publishMany: async () => Promise.reject(new Error("redis down")), close: async () => {} };
    await expect(relayOnce(t.db, broken, 10)).rejects.toThrow(/redis down/);
    const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL");
    expect(rows[0].n).toBe(1);
  });
});
