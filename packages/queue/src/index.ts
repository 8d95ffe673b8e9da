import { DelayedError, type Job, Queue } from "bullmq";
import { Cluster } from "ioredis";
import { type QueueConfig, redisConnection } from "./client";
import { createRedis, isCluster, nodesOf, type RedisClient, type RedisTarget } from "./connection";

/**
 * BullMQ only wakes processes; PostgreSQL is the record. A lost or repeated message costs latency or a no-op,
 * never correctness: every consumer re-checks the database and the sweeper re-wakes what a lost message stranded.
 */

/**
 * A standing connection for outage checks: `ping()` answers PONG or throws at once while Redis is away (no offline
 * queue); the connection comes back by itself within a second of Redis. On a cluster the PING goes to one of its
 * nodes: the cluster answers.
 */
export function redisProbe(target: RedisTarget): { ping(): Promise<void>; close(): void } {
  const redis = createRedis(target, { maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 3_000, retryStrategy: () => 1_000 });
  redis.on("error", () => undefined);
  return {
    async ping() {
      await redis.ping();
    },
    close: () => redis.disconnect(),
  };
}

/** Resolves once a cluster client knows its nodes (a server's client queues the commands itself). */
async function known(redis: RedisClient): Promise<void> {
  if (!(redis instanceof Cluster) || redis.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    redis.once("ready", resolve);
    redis.once("end", () => reject(new Error("no node of the Redis Cluster answers; check REDIS_CLUSTER_NODES")));
  });
}

/** The nodes whose policy is not noeviction: "host:port is <policy>" on a cluster, the policy alone on a server. */
async function evictingNodes(redis: RedisClient): Promise<string[]> {
  await known(redis);
  const found = await Promise.all(
    nodesOf(redis).map(async (node) => {
      const policy = ((await node.config("GET", "maxmemory-policy")) as string[])[1] ?? null;
      if (policy === "noeviction") return null;
      return redis instanceof Cluster ? `${node.options.host}:${node.options.port} is ${policy}` : `${policy}`;
    }),
  );
  return found.filter((p): p is string => p !== null);
}

/**
 * BullMQ silently loses jobs when Redis may evict keys; refuse to run on such a Redis. On a cluster every node is
 * asked, replicas too: a replica becomes the master of its slots in a failover.
 */
export async function assertNoEviction(redis: RedisClient): Promise<void> {
  const evicting = await evictingNodes(redis);
  if (evicting.length === 0) return;
  if (!(redis instanceof Cluster)) {
    throw new Error(`Redis maxmemory-policy is "${evicting[0]}"; BullMQ needs "noeviction" (jobs vanish under eviction)`);
  }
  throw new Error(
    `Redis Cluster nodes with a maxmemory-policy other than "noeviction": ${evicting.join(", ")}; set it on every node (CONFIG SET maxmemory-policy noeviction and in its redis.conf): BullMQ jobs vanish under eviction`,
  );
}

/** For readiness checks: Redis's eviction policy, or why it could not be read (never throws, gives up after timeoutMs). */
export async function redisPolicy(target: RedisTarget, timeoutMs = 3_000): Promise<{ ok: boolean; policy: string | null; problem: string | null }> {
  const redis = createRedis(target, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: timeoutMs, retryStrategy: () => null });
  redis.on("error", () => undefined);
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out")), timeoutMs).unref());
  try {
    await Promise.race([redis.connect(), timeout]);
    if (isCluster(target)) {
      const evicting = await Promise.race([evictingNodes(redis), timeout]);
      const ok = evicting.length === 0;
      return { ok, policy: ok ? "noeviction" : "mixed", problem: ok ? null : `maxmemory-policy: ${evicting.join(", ")}; BullMQ needs noeviction on every node` };
    }
    const reply = (await Promise.race([redis.config("GET", "maxmemory-policy"), timeout])) as string[];
    const policy = reply[1] ?? null;
    return { ok: policy === "noeviction", policy, problem: policy === "noeviction" ? null : `maxmemory-policy is ${policy}; BullMQ needs noeviction` };
  } catch (error) {
    return { ok: false, policy: null, problem: `redis: ${(error as Error).message}` };
  } finally {
    redis.disconnect();
  }
}

/**
 * At start-up: Redis answers and will not evict; exits the check with a clear error otherwise. A cluster is given
 * a few seconds more: in a failover a node's connection closes or its slots move while the check reads it.
 */
export async function checkRedis(target: RedisTarget): Promise<void> {
  const deadline = Date.now() + (isCluster(target) ? 15_000 : 0);
  for (;;) {
    const redis = redisConnection(target);
    redis.on("error", () => undefined);
    try {
      return await assertNoEviction(redis);
    } catch (error) {
      if (Date.now() > deadline || /maxmemory-policy/.test((error as Error).message)) throw error;
    } finally {
      redis.disconnect();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

export interface PublishOptions {
  /** Job id: the outbox id for relayed intents, so a republished row is suppressed while the queue remembers it. */
  jobId: string;
  delayMs?: number;
}

export interface Publication {
  queue: string;
  name: string;
  data: unknown;
  options: PublishOptions;
}

export interface Publisher {
  publish(queue: string, name: string, data: unknown, options: PublishOptions): Promise<void>;
  /** Many jobs at once: one bulk add (one MULTI round trip) per queue. */
  publishMany(jobs: Publication[]): Promise<void>;
  close(): Promise<void>;
}

export function createPublisher(config: QueueConfig): Publisher {
  const connection = redisConnection(config.redis, { failFast: true });
  const queues = new Map<string, Queue>();
  const queueFor = (name: string) => {
    let queue = queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection,
        prefix: config.prefix,
        defaultJobOptions: {
          // Keep completed ids for a while (suppresses relay repeats) but never let Redis grow without bound.
          removeOnComplete: { age: 3600, count: 50_000 },
          removeOnFail: { age: 24 * 3600, count: 50_000 },
          attempts: 3,
          backoff: { type: "exponential", delay: 500 },
        },
      });
      if (config.onError) queue.on("error", config.onError);
      queues.set(name, queue);
    }
    return queue;
  };
  const jobOptions = (options: PublishOptions) => ({
    jobId: options.jobId,
    ...(options.delayMs && options.delayMs > 0 ? { delay: Math.ceil(options.delayMs) } : {}),
  });
  return {
    async publish(queue, name, data, options) {
      await queueFor(queue).add(name, data, jobOptions(options));
    },
    async publishMany(jobs) {
      const byQueue = new Map<string, Publication[]>();
      for (const job of jobs) byQueue.set(job.queue, [...(byQueue.get(job.queue) ?? []), job]);
      await Promise.all(
        [...byQueue].map(([queue, list]) => queueFor(queue).addBulk(list.map((j) => ({ name: j.name, data: j.data, opts: jobOptions(j.options) })))),
      );
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      connection.disconnect();
    },
  };
}

export { type QueueConfig, redisConnection } from "./client";
export {
  type Consumer,
  type ConsumerOptions,
  consumerConnectionName,
  createConsumer,
  queueJobCounts,
  type StuckConsumer,
  stuckConsumerMessage,
} from "./consumer";
export { DelayedError };
export type { Job };

export { queueNames } from "./names";
export { createRedis, describeRedisTarget, parseClusterNodes, type RedisClient, type RedisTarget, redisTargetOf } from "./connection";

export { createWakePublisher, readyWakeChannel, subscribeReady, type WakeConfig, type WakePublisher, type WakeSubscription } from "./wake";
