import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkRedis,
  createConsumer,
  createPublisher,
  createRedis,
  createWakePublisher,
  parseClusterNodes,
  queueNames,
  type RedisClient,
  type RedisTarget,
  redisPolicy,
  subscribeReady,
} from "@holdfast/queue";
import { type RedisClusterHandle, startRedisCluster } from "@holdfast/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { laneNames, queueForTopic } from "../src/base/catalog";

/**
 * The queues, the wake-up channels and the eviction check on a real Redis Cluster (six redis-server nodes, three
 * masters): every queue's keys in one slot, wake-ups heard across a master's death, every node checked for eviction.
 */
let dir: string;
let cluster: RedisClusterHandle;
let target: RedisTarget;
const prefix = "hf_cluster";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hf-redis-cluster-"));
  cluster = await startRedisCluster(dir);
  target = { clusterNodes: parseClusterNodes(cluster.nodes) };
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const until = async (what: string, ok: () => boolean, ms = 15_000) => {
  for (let waited = 0; !ok(); waited += 25) {
    if (waited > ms) throw new Error(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
};
const onNode = async <T>(port: number, f: (r: RedisClient) => Promise<T>) => {
  const r = createRedis(`redis://127.0.0.1:${port}`);
  try {
    return await f(r);
  } finally {
    r.disconnect();
  }
};

describe("BullMQ on a Redis Cluster", () => {
  it("publishes and consumes on every queue, delayed jobs included, each queue's keys in the slot of its hash tag", async () => {
    const queues = [queueNames.engine, ...laneNames.map((lane) => queueNames.lane(lane))];
    // Every topic routes to one of these names (the catalog writes no queue name of its own).
    expect(queueForTopic("run.wake", {})).toBe(queueNames.engine);
    expect(queueForTopic("approval.notify", {})).toBe(queueNames.lane("human"));
    const seen: string[] = [];
    const consumers = queues.map((queue) =>
      createConsumer({ redis: target, prefix }, queue, async (job) => void seen.push(`${queue}/${job.id}`), { concurrency: 2 }),
    );
    await Promise.all(consumers.map((c) => c.waitUntilReady()));
    const publisher = createPublisher({ redis: target, prefix });
    try {
      await publisher.publishMany(queues.map((queue) => ({ queue, name: "t", data: {}, options: { jobId: "now" } })));
      for (const queue of queues) await publisher.publish(queue, "t", {}, { jobId: "later", delayMs: 300 });
      const expected = queues.flatMap((q) => [`${q}/now`, `${q}/later`]).sort();
      await until("every queue's jobs consumed", () => seen.length >= expected.length);
      expect(seen.sort()).toEqual(expected);
    } finally {
      await publisher.close();
      await Promise.all(consumers.map((c) => c.close()));
    }
    // The keys BullMQ wrote for a queue all sit in its tag's slot, and the queues are not all on one slot.
    const admin = createRedis(target);
    try {
      const slots = await Promise.all(queues.map((q) => admin.cluster("KEYSLOT", q) as Promise<number>));
      expect(new Set(slots).size).toBe(queues.length);
      for (const [i, queue] of queues.entries()) {
        expect(await admin.cluster("KEYSLOT", `${prefix}:${queue}:wait`)).toBe(slots[i]);
        expect(await admin.cluster("KEYSLOT", `${prefix}:${queue}:delayed`)).toBe(slots[i]);
      }
    } finally {
      admin.disconnect();
    }
  }, 60_000);

  it("a consumer goes on taking its queue's jobs after the master of the queue's slot died", async () => {
    const queue = queueNames.lane("human");
    const failoverPrefix = `${prefix}_failover`;
    const seen: string[] = [];
    // The watch off: this is BullMQ's own recovery (the watch is e2e'd in queue-consumer-watch.test.ts).
    const consumer = createConsumer({ redis: target, prefix: failoverPrefix, onError: () => undefined }, queue, async (job) => void seen.push(job.id ?? ""), {
      concurrency: 2,
      watchEveryMs: 0,
    });
    await consumer.waitUntilReady();
    const publisher = createPublisher({ redis: target, prefix: failoverPrefix, onError: () => undefined });
    const admin = createRedis(target);
    admin.on("error", () => undefined);
    try {
      await publisher.publish(queue, "t", {}, { jobId: "before" });
      await until("the job before the failover consumed", () => seen.includes("before"));
      // The master that holds the queue's slot: the consumer's blocking wait and its job fetches go there.
      const slot = (await admin.cluster("KEYSLOT", `${failoverPrefix}:${queue}:wait`)) as number;
      const ranges = await admin.cluster("SLOTS");
      const owner = ranges.find(([from, to]) => from <= slot && slot <= to)?.[2]?.[1];
      expect(owner).toBeDefined();
      // Idle, so the consumer is blocked on that master when it dies.
      await new Promise((r) => setTimeout(r, 500));
      const killed = await cluster.killMaster(owner);
      console.log(`consumer failover test: master ${killed.port} of slot ${slot} killed, failover ${killed.failoverMs} ms`);
      // The publisher fails fast while its client learns the new master; the job goes in once it has.
      for (let tries = 0; ; tries++) {
        try {
          await publisher.publish(queue, "t", {}, { jobId: "after" });
          break;
        } catch (error) {
          if (tries > 100) throw error;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      await until("the job published after the failover consumed", () => seen.includes("after"), 30_000);
      await cluster.restartNode(killed.port);
    } finally {
      admin.disconnect();
      await publisher.close();
      await consumer.close();
    }
  }, 120_000);

  it("delivers wake-ups from a publisher on the cluster, and again after the subscriber's node died", async () => {
    const woken: (string | null)[] = [];
    // The subscriber connects to the first seed node: make it a master and kill it.
    const first = cluster.ports[0] as number;
    const sub = subscribeReady({ redis: target, prefix }, ["io", "slow"], (lane) => woken.push(lane));
    const wake = createWakePublisher({ redis: target, prefix });
    try {
      expect(await wake.whenConnected(10_000)).toBe(true);
      await until("the subscription confirmed", () => woken.includes(null));
      wake.ready(["io"]);
      await until("the io wake-up heard", () => woken.includes("io"));
      const masters = await cluster.masters();
      const victim = masters.includes(first) ? first : (masters[0] as number);
      const confirmations = woken.filter((w) => w === null).length;
      const killed = await cluster.killMaster(victim);
      console.log(`wake-up test: master ${killed.port} killed, failover ${killed.failoverMs} ms`);
      if (victim === first) await until("the subscription moved to another node", () => woken.filter((w) => w === null).length > confirmations);
      // The publisher's cluster client finds the new master; a publish to the dead node may fail meanwhile (NOTIFY covers it).
      await until(
        "a slow wake-up heard after the failover",
        () => {
          if (wake.connected) wake.ready(["slow"]);
          return woken.includes("slow");
        },
        20_000,
      );
      await cluster.restartNode(killed.port);
    } finally {
      await sub.close();
      await wake.close();
    }
  }, 90_000);
});

describe("the eviction check on a Redis Cluster", () => {
  it("refuses a cluster with one master that may evict, naming the node, and passes once it is noeviction", async () => {
    await checkRedis(target);
    expect(await redisPolicy(target)).toMatchObject({ ok: true, policy: "noeviction" });
    const [master] = await cluster.masters();
    await onNode(master as number, (r) => r.config("SET", "maxmemory-policy", "allkeys-lru"));
    try {
      await expect(checkRedis(target)).rejects.toThrow(`127.0.0.1:${master} is allkeys-lru`);
      const policy = await redisPolicy(target);
      expect(policy.ok).toBe(false);
      expect(policy.problem).toContain(`127.0.0.1:${master} is allkeys-lru`);
    } finally {
      await onNode(master as number, (r) => r.config("SET", "maxmemory-policy", "noeviction"));
    }
    await checkRedis(target);
  }, 30_000);
});
