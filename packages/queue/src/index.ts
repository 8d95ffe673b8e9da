import { DelayedError, type Job, type Processor, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";

/**
 * BullMQ only wakes processes; PostgreSQL is the record. A lost or repeated message costs latency or a no-op,
 * never correctness: every consumer re-checks the database and the sweeper re-wakes what a lost message stranded.
 */

export interface QueueConfig {
  redisUrl: string;
  /** Redis key prefix: one per deployment, one per test file. */
  prefix: string;
  /**
   * Connection errors of the queue's clients (they reconnect by themselves): without a listener BullMQ prints each
   * one, once per reconnect attempt. Processes pass their outage watch's `report` (core/ops/outage.ts).
   */
  onError?: (error: Error) => void;
}

export function redisConnection(redisUrl: string, options: { failFast?: boolean } = {}): Redis {
  // BullMQ's blocking commands need maxRetriesPerRequest: null. A publisher fails fast instead of queueing commands
  // while Redis is away: the relay's batch then rolls back at once rather than holding its rows until Redis is back.
  return new Redis(redisUrl, {
    maxRetriesPerRequest: options.failFast ? 1 : null,
    enableOfflineQueue: !options.failFast,
    enableReadyCheck: true,
    lazyConnect: false,
  });
}

/**
 * A standing connection for outage checks: `ping()` answers PONG or throws at once while Redis is away (no offline
 * queue); the connection comes back by itself within a second of Redis.
 */
export function redisProbe(redisUrl: string): { ping(): Promise<void>; close(): void } {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 3_000, retryStrategy: () => 1_000 });
  redis.on("error", () => undefined);
  return {
    async ping() {
      await redis.ping();
    },
    close: () => redis.disconnect(),
  };
}

/** BullMQ silently loses jobs when Redis may evict keys; refuse to run on such a Redis. */
export async function assertNoEviction(redis: Redis): Promise<void> {
  const reply = (await redis.config("GET", "maxmemory-policy")) as string[];
  const policy = reply[1];
  if (policy !== "noeviction") {
    throw new Error(`Redis maxmemory-policy is "${policy}"; BullMQ needs "noeviction" (jobs vanish under eviction)`);
  }
}

/** For readiness checks: Redis's eviction policy, or why it could not be read (never throws, gives up after timeoutMs). */
export async function redisPolicy(redisUrl: string, timeoutMs = 3_000): Promise<{ ok: boolean; policy: string | null; problem: string | null }> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: timeoutMs, retryStrategy: () => null });
  redis.on("error", () => undefined);
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out")), timeoutMs).unref());
  try {
    await Promise.race([redis.connect(), timeout]);
    const reply = (await Promise.race([redis.config("GET", "maxmemory-policy"), timeout])) as string[];
    const policy = reply[1] ?? null;
    return { ok: policy === "noeviction", policy, problem: policy === "noeviction" ? null : `maxmemory-policy is ${policy}; BullMQ needs noeviction` };
  } catch (error) {
    return { ok: false, policy: null, problem: `redis: ${(error as Error).message}` };
  } finally {
    redis.disconnect();
  }
}

/** At start-up: Redis answers and will not evict; exits the check with a clear error otherwise. */
export async function checkRedis(redisUrl: string): Promise<void> {
  const redis = redisConnection(redisUrl);
  try {
    await assertNoEviction(redis);
  } finally {
    redis.disconnect();
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
  const connection = redisConnection(config.redisUrl, { failFast: true });
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

export interface ConsumerOptions {
  /** Jobs in progress at once; BullMQ fetches a job only when a slot is free (no claim without a slot). */
  concurrency: number;
  /** How long BullMQ keeps a job locked before another consumer may take it (not the step lease). */
  lockDurationMs?: number;
}

export type Consumer = Worker;
export { DelayedError };
export type { Job };

export function createConsumer(
  config: QueueConfig,
  queue: string,
  handler: Processor,
  options: ConsumerOptions,
): Consumer {
  const worker = new Worker(queue, handler, {
    connection: redisConnection(config.redisUrl),
    prefix: config.prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs ?? 60_000,
    // Wake-ups are cheap to drop: the sweeper is the backstop, so a stalled job is not retried forever.
    maxStalledCount: 2,
  });
  if (config.onError) worker.on("error", config.onError);
  return worker;
}

export const queueNames = {
  engine: "engine",
  lane: (lane: string) => `lane-${lane}`,
} as const;

export { createWakePublisher, readyWakeChannel, subscribeReady, type WakeConfig, type WakePublisher, type WakeSubscription } from "./wake";
