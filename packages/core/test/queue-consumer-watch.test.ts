import { consumerConnectionName, createConsumer, createPublisher, createRedis, type StuckConsumer } from "@holdfast/queue";
import { createTestPrefix, testRedisUrl } from "@holdfast/testkit";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The queue consumer's watch (packages/queue: createConsumer). BullMQ workers are known to stop taking jobs after a
 * Redis failover while saying they run (the cluster soak's human lane once took no Slack notification for four
 * minutes with 150 owed). A worker that stopped fetching (paused here, as BullMQ's own state for "takes nothing") is
 * replaced once jobs waited with a slot free for the set time, and the jobs are taken; a worker whose slots are all
 * busy with slow jobs is not.
 */
const prefix = createTestPrefix();
afterAll(() => prefix.clear());

/** Connections open on the test Redis under a consumer of `queue`'s name. */
async function openConnections(queue: string): Promise<number> {
  const redis = createRedis(testRedisUrl);
  try {
    return String(await redis.client("LIST"))
      .split("\n")
      .filter((line) => line.includes(` name=${consumerConnectionName(queue)} `)).length;
  } finally {
    redis.disconnect();
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !check(); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

describe("a queue consumer's watch", () => {
  it("replaces a worker that stopped taking jobs while they wait, and the jobs are taken", async () => {
    const queue = "watch-stuck";
    const seen: string[] = [];
    const replaced: StuckConsumer[] = [];
    const consumer = createConsumer({ redis: testRedisUrl, prefix: prefix.prefix }, queue, async (job) => void seen.push(job.id ?? ""), {
      concurrency: 2,
      watchEveryMs: 200,
      stuckAfterMs: 1_000,
      onReplaced: (s) => replaced.push(s),
    });
    const publisher = createPublisher({ redis: testRedisUrl, prefix: prefix.prefix });
    try {
      await consumer.waitUntilReady();
      await publisher.publish(queue, "t", {}, { jobId: "first" });
      await until("the first job", () => seen.includes("first"));
      // Idle longer than the stuck time, then a job: a healthy worker takes it and is not replaced.
      await new Promise((r) => setTimeout(r, 1_500));
      await publisher.publish(queue, "t", {}, { jobId: "after-idle" });
      await until("the job after the idle time", () => seen.includes("after-idle"));
      await new Promise((r) => setTimeout(r, 1_500));
      expect(consumer.replacements).toBe(0);
      const stuck = consumer.worker;
      // A worker that takes nothing though it has room: what a failover left behind, in BullMQ's own terms.
      await stuck.pause(true);
      await publisher.publish(queue, "t", {}, { jobId: "second" });
      await publisher.publish(queue, "t", {}, { jobId: "third" });
      await until("the jobs published while the worker took nothing", () => seen.includes("second") && seen.includes("third"));
      expect(consumer.replacements).toBe(1);
      expect(consumer.worker).not.toBe(stuck);
      expect(replaced).toHaveLength(1);
      expect(replaced[0]).toMatchObject({ queue, inProgress: 0, concurrency: 2, paused: true, replacements: 1 });
      // One or both (the paused worker may have fetched one as it paused).
      expect(replaced[0]?.waiting).toBeGreaterThanOrEqual(1);
      expect(replaced[0]?.stuckMs).toBeGreaterThanOrEqual(1_000);
      // Taking jobs again, it stays: nothing more is replaced.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(consumer.replacements).toBe(1);
      // The new worker's connections and the watch's are open (the name is what the check below looks for).
      expect(await openConnections(queue)).toBeGreaterThanOrEqual(2);
    } finally {
      await publisher.close();
      await consumer.close();
    }
    // Every connection it opened is closed once it is, the replaced worker's too.
    let open = -1;
    for (const end = Date.now() + 10_000; open !== 0 && Date.now() < end; await new Promise((r) => setTimeout(r, 100))) open = await openConnections(queue);
    expect(open).toBe(0);
  }, 60_000);

  it("leaves a worker alone whose slots are all busy with slow jobs while others wait", async () => {
    const queue = "watch-busy";
    const done: string[] = [];
    const consumer = createConsumer(
      { redis: testRedisUrl, prefix: prefix.prefix },
      queue,
      async (job) => {
        await new Promise((r) => setTimeout(r, 2_500));
        done.push(job.id ?? "");
      },
      { concurrency: 1, watchEveryMs: 200, stuckAfterMs: 1_000 },
    );
    const publisher = createPublisher({ redis: testRedisUrl, prefix: prefix.prefix });
    try {
      await consumer.waitUntilReady();
      await publisher.publish(queue, "t", {}, { jobId: "slow-1" });
      await publisher.publish(queue, "t", {}, { jobId: "slow-2" });
      await until("both slow jobs", () => done.length === 2, 20_000);
      expect(done).toEqual(["slow-1", "slow-2"]);
      expect(consumer.replacements).toBe(0);
    } finally {
      await publisher.close();
      await consumer.close();
    }
  }, 60_000);
});
