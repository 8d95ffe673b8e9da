import { DelayedError, type Job, type Processor, Queue, Worker } from "bullmq";
import { Cluster } from "ioredis";
import { createRedis, isCluster, nodesOf, type RedisClient, type RedisTarget } from "./connection";

/**
 * BullMQ only wakes processes; PostgreSQL is the record. A lost or repeated message costs latency or a no-op,
 * never correctness: every consumer re-checks the database and the sweeper re-wakes what a lost message stranded.
 */

export interface QueueConfig {
  /** A Redis server's URL or a Redis Cluster's seed nodes (redisTargetOf(env)). */
  redis: RedisTarget;
  /** Redis key prefix: one per deployment, one per test file. */
  prefix: string;
  /**
   * Connection errors of the queue's clients (they reconnect by themselves): without a listener BullMQ prints each
   * one, once per reconnect attempt. Processes pass their outage watch's `report` (core/ops/outage.ts).
   */
  onError?: (error: Error) => void;
}

export function redisConnection(
  target: RedisTarget,
  options: { failFast?: boolean; commandTimeoutMs?: number; name?: string } = {},
): RedisClient {
  // BullMQ's blocking commands need maxRetriesPerRequest: null. A publisher fails fast instead of queueing commands
  // while Redis is away: the relay's batch then rolls back at once rather than holding its rows until Redis is back.
  return createRedis(target, {
    maxRetriesPerRequest: options.failFast ? 1 : null,
    enableOfflineQueue: !options.failFast,
    enableReadyCheck: true,
    lazyConnect: false,
    ...(options.commandTimeoutMs ? { commandTimeout: options.commandTimeoutMs } : {}),
    ...(options.name ? { connectionName: options.name } : {}),
  });
}

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

export interface ConsumerOptions {
  /** Jobs in progress at once; BullMQ fetches a job only when a slot is free (no claim without a slot). */
  concurrency: number;
  /** How long BullMQ keeps a job locked before another consumer may take it (not the step lease). */
  lockDurationMs?: number;
  /** How often the watch looks for a stuck fetch loop (below). Default 10 s; 0 turns it off. */
  watchEveryMs?: number;
  /** How long jobs may wait with a slot free and nothing taken before the worker is replaced. Default 30 s. */
  stuckAfterMs?: number;
  /** Told each time the watch replaced the worker, with what it saw (for the process's log). */
  onReplaced?: (seen: StuckConsumer) => void;
}

/** What the consumer's watch saw when it replaced a worker that had stopped taking jobs. */
export interface StuckConsumer {
  queue: string;
  /** Jobs waiting in the queue (waiting and prioritized) at the last check. */
  waiting: number;
  /** How long the watch has seen jobs waiting, a slot of this process free and nothing started or finished here. */
  stuckMs: number;
  /** This process's jobs in progress, and its concurrency. */
  inProgress: number;
  concurrency: number;
  /** BullMQ's own view of the worker it replaced. */
  running: boolean;
  paused: boolean;
  /** Workers replaced so far in this process's consumer, this one included. */
  replacements: number;
}

/** The log line for a replaced worker. */
export function stuckConsumerMessage(seen: StuckConsumer): string {
  return `the ${seen.queue} queue's consumer took no job for ${Math.round(seen.stuckMs / 1000)} s while jobs waited (${seen.waiting} now) with a slot free: replaced it with a new one (replacement ${seen.replacements} in this process)`;
}

/** A queue's jobs by state (waiting, active, delayed, ...), read once on a connection of its own (diagnostics). */
export async function queueJobCounts(config: QueueConfig, queue: string): Promise<Record<string, number>> {
  const connection = redisConnection(config.redis, { failFast: true, commandTimeoutMs: 5_000 });
  connection.on("error", () => undefined);
  const q = new Queue(queue, { connection, prefix: config.prefix });
  q.on("error", () => undefined);
  try {
    return await q.getJobCounts("wait", "prioritized", "active", "delayed", "failed", "completed");
  } finally {
    await q.close().catch(() => undefined);
    connection.disconnect();
  }
}

type FailedListener = (job: Job | undefined, error: Error) => void;

export interface Consumer {
  on(event: "failed", listener: FailedListener): void;
  waitUntilReady(): Promise<void>;
  /** Stops taking jobs, waits for the jobs in hand, and closes every connection (the replaced workers' too). */
  close(): Promise<void>;
  /** Workers the watch replaced so far. */
  readonly replacements: number;
  /** The BullMQ worker taking jobs now (for inspection; it changes when the watch replaces it). */
  readonly worker: Worker;
}

/** The name of every Redis connection a consumer of `queue` opens itself (CLIENT LIST shows it). */
export const consumerConnectionName = (queue: string) => `holdfast-consumer-${queue.replace(/[^\w-]/g, "")}`;

/**
 * A BullMQ worker on `queue`, with a watch for the way BullMQ workers are known to get stuck after a Redis failover
 * or reconnect (taskforcesh/bullmq#648, #2466, #3088): the worker says it runs, jobs wait, and it takes none. Every
 * `watchEveryMs` the watch reads the queue's waiting count (one round trip, 5 s at most). When it has seen jobs
 * waiting, a slot of this process free and no job started or finished here, check after check for `stuckAfterMs`
 * (longer than BullMQ's own 15 s pause before fetching again after a connection error), it starts a new worker
 * (new connections, the listeners moved over) and closes the old one without force: a job the old one holds runs to
 * its end and is acknowledged, and its connection is closed after. Every consumer re-checks the database, so a job
 * taken twice in the hand-over is a no-op the second time.
 */
export function createConsumer(config: QueueConfig, queue: string, handler: Processor, options: ConsumerOptions): Consumer {
  let inProgress = 0;
  let lastProgress = Date.now();
  const tracked: Processor = async (job, token, signal) => {
    inProgress++;
    lastProgress = Date.now();
    try {
      return await handler(job, token, signal);
    } finally {
      inProgress--;
      lastProgress = Date.now();
    }
  };
  const name = consumerConnectionName(queue);
  const failedListeners: FailedListener[] = [];
  const newWorker = () => {
    const connection = redisConnection(config.redis, { name });
    // BullMQ leaves a connection it was given open when it closes: each worker's is disconnected after it.
    const w = new Worker(queue, tracked, {
      connection,
      prefix: config.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs ?? 60_000,
      // Wake-ups are cheap to drop: the sweeper is the backstop, so a stalled job is not retried forever.
      maxStalledCount: 2,
    });
    if (config.onError) w.on("error", config.onError);
    for (const listener of failedListeners) w.on("failed", listener);
    return { worker: w, connection };
  };
  let current = newWorker();
  const retiring = new Set<Promise<void>>();
  const retire = (old: { worker: Worker; connection: RedisClient }) => {
    // Without force: the jobs it holds finish and are acknowledged. A worker stuck in its close is let go after the
    // lock time (its jobs then come back as stalled, as after a crash).
    const closed = Promise.race([old.worker.close().catch(() => undefined), new Promise((r) => setTimeout(r, options.lockDurationMs ?? 60_000).unref())]).then(() => {
      old.connection.disconnect();
      retiring.delete(closed);
    });
    retiring.add(closed);
  };
  let replacements = 0;
  let closing = false;
  const every = options.watchEveryMs ?? 10_000;
  const stuckAfter = options.stuckAfterMs ?? 30_000;
  // Counts only (no blocking commands): a connection of its own, failing fast while Redis is away, 5 s at most a call.
  const countsConnection = every > 0 ? redisConnection(config.redis, { failFast: true, commandTimeoutMs: 5_000, name }) : null;
  const counts = countsConnection ? new Queue(queue, { connection: countsConnection, prefix: config.prefix }) : null;
  if (counts && config.onError) counts.on("error", config.onError);
  if (countsConnection) countsConnection.on("error", config.onError ?? (() => undefined));
  /** Since when the watch has seen jobs waiting with a slot free and no progress (null: not now). */
  let waitingSince: number | null = null;
  let checking = false;
  const watch =
    counts &&
    setInterval(async () => {
      if (closing || checking) return;
      checking = true;
      const checkedAt = Date.now();
      try {
        const c = await counts.getJobCounts("wait", "prioritized");
        const waiting = (c.wait ?? 0) + (c.prioritized ?? 0);
        const now = Date.now();
        if (closing || waiting === 0 || inProgress >= options.concurrency || lastProgress >= checkedAt) {
          waitingSince = null;
          return;
        }
        // Counted from a check that saw jobs waiting after the last job this process started or finished.
        if (waitingSince === null || lastProgress > waitingSince) waitingSince = checkedAt;
        if (now - waitingSince < stuckAfter) return;
        const old = current;
        replacements++;
        const seen: StuckConsumer = {
          queue,
          waiting,
          stuckMs: now - waitingSince,
          inProgress,
          concurrency: options.concurrency,
          running: old.worker.isRunning(),
          paused: old.worker.isPaused(),
          replacements,
        };
        waitingSince = null;
        lastProgress = now;
        current = newWorker();
        retire(old);
        try {
          options.onReplaced?.(seen);
        } catch {
          // A log line that failed changes nothing here.
        }
      } catch {
        // Redis away or slow: the outage watch says so; the watch starts counting again once it answers.
        waitingSince = null;
      } finally {
        checking = false;
      }
    }, every);
  watch?.unref();
  return {
    on(event, listener) {
      failedListeners.push(listener);
      current.worker.on(event, listener);
    },
    waitUntilReady: () => current.worker.waitUntilReady().then(() => undefined),
    async close() {
      closing = true;
      if (watch) clearInterval(watch);
      await current.worker.close();
      current.connection.disconnect();
      await Promise.all(retiring);
      await counts?.close().catch(() => undefined);
      countsConnection?.disconnect();
    },
    get replacements() {
      return replacements;
    },
    get worker() {
      return current.worker;
    },
  };
}

export { DelayedError };
export type { Job };

export { queueNames } from "./names";
export { createRedis, describeRedisTarget, parseClusterNodes, type RedisClient, type RedisTarget, redisTargetOf } from "./connection";

export { createWakePublisher, readyWakeChannel, subscribeReady, type WakeConfig, type WakePublisher, type WakeSubscription } from "./wake";
