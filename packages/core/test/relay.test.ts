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
