import { type Job, type Processor, Queue, Worker } from "bullmq";
import { type QueueConfig, redisConnection } from "./client";
import type { RedisClient } from "./connection";

export interface ConsumerOptions {
  /** Jobs in progress at once; BullMQ fetches a job only when a slot is free (no claim without a slot). */
  concurrency: number;
  /** How long BullMQ keeps a job locked before another consumer may take it (not the step lease). */
  lockDurationMs?: number;
  /** How often the watch looks for a stuck worker (below). Default 10 s; 0 turns it off. */
  watchEveryMs?: number;
  /** How long checks in a row must see jobs waiting, a slot free and nothing taken. Default 30 s. */
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

/**
 * A queue's counts, read on a connection of its own that never blocks: failing fast while Redis is away, 5 s at most a
 * call. `close` disconnects it (BullMQ leaves a connection it was given open).
 */
function countsReader(config: QueueConfig, queue: string, name?: string): { queue: Queue; close(): Promise<void> } {
  const connection = redisConnection(config.redis, { failFast: true, commandTimeoutMs: 5_000, ...(name ? { name } : {}) });
  connection.on("error", config.onError ?? (() => undefined));
  const q = new Queue(queue, { connection, prefix: config.prefix });
  q.on("error", config.onError ?? (() => undefined));
  return {
    queue: q,
    async close() {
      await q.close().catch(() => undefined);
      connection.disconnect();
    },
  };
}

/** A queue's jobs by state (waiting, active, delayed, ...), read once (diagnostics). */
export async function queueJobCounts(config: QueueConfig, queue: string): Promise<Record<string, number>> {
  const reader = countsReader({ ...config, onError: () => undefined }, queue);
  try {
    return await reader.queue.getJobCounts("wait", "prioritized", "active", "delayed", "failed", "completed");
  } finally {
    await reader.close();
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

/** This process's jobs in progress and when one last started or finished. */
interface Progress {
  inProgress: number;
  last: number;
}

/** The handler, counting its jobs in progress and stamping each start and end. */
function tracking(handler: Processor, progress: Progress): Processor {
  return async (job, token, signal) => {
    progress.inProgress++;
    progress.last = Date.now();
    try {
      return await handler(job, token, signal);
    } finally {
      progress.inProgress--;
      progress.last = Date.now();
    }
  };
}

interface Held {
  worker: Worker;
  connection: RedisClient;
}

/**
 * A BullMQ worker on `queue`, with a watch for the way BullMQ workers are known to get stuck after a Redis failover
 * or reconnect (taskforcesh/bullmq#648, #2466, #3088): the worker says it runs, jobs wait, and it takes none. Every
 * `watchEveryMs` the watch reads the queue's waiting count (one round trip, 5 s at most). When checks in a row have
 * seen jobs waiting, a slot of this process free and no job started or finished here for `stuckAfterMs` (longer
 * than BullMQ's own 15 s pause before fetching again after a connection error), it starts a new worker (new
 * connections, the listeners moved over) and closes the old one without force: a job the old one holds runs to its
 * end and is acknowledged, and its connection is closed after. Every consumer re-checks the database, so a job taken
 * twice in the hand-over is a no-op the second time.
 */
export function createConsumer(config: QueueConfig, queue: string, handler: Processor, options: ConsumerOptions): Consumer {
  const progress: Progress = { inProgress: 0, last: Date.now() };
  const tracked = tracking(handler, progress);
  const name = consumerConnectionName(queue);
  const failedListeners: FailedListener[] = [];
  const start = (): Held => {
    // BullMQ leaves a connection it was given open when it closes: each worker's is disconnected after it.
    const connection = redisConnection(config.redis, { name });
    const worker = new Worker(queue, tracked, {
      connection,
      prefix: config.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs ?? 60_000,
      // Wake-ups are cheap to drop: the sweeper is the backstop, so a stalled job is not retried forever.
      maxStalledCount: 2,
    });
    if (config.onError) worker.on("error", config.onError);
    for (const listener of failedListeners) worker.on("failed", listener);
    return { worker, connection };
  };
  let current = start();
  const retiring = new Set<Promise<void>>();
  const retire = (old: Held) => {
    // Without force: the jobs it holds finish and are acknowledged. A worker stuck in its close is let go after the
    // lock time (its jobs then come back as stalled, as after a crash).
    const lockMs = options.lockDurationMs ?? 60_000;
    const closed = Promise.race([old.worker.close().catch(() => undefined), new Promise((r) => setTimeout(r, lockMs).unref())]).then(() => {
      old.connection.disconnect();
      retiring.delete(closed);
    });
    retiring.add(closed);
  };
  let replacements = 0;
  const watch = watchConsumer(config, queue, options, progress, () => {
    const old = current;
    replacements++;
    current = start();
    retire(old);
    return { replacements, running: old.worker.isRunning(), paused: old.worker.isPaused() };
  });
  return {
    on(event, listener) {
      failedListeners.push(listener);
      current.worker.on(event, listener);
    },
    waitUntilReady: () => current.worker.waitUntilReady().then(() => undefined),
    async close() {
      await watch.stop();
      await current.worker.close();
      current.connection.disconnect();
      await Promise.all(retiring);
    },
    get replacements() {
      return replacements;
    },
    get worker() {
      return current.worker;
    },
  };
}

/** The watch's timer: `replace` swaps the worker and says what the old one was. */
function watchConsumer(
  config: QueueConfig,
  queue: string,
  options: ConsumerOptions,
  progress: Progress,
  replace: () => Pick<StuckConsumer, "replacements" | "running" | "paused">,
): { stop(): Promise<void> } {
  const every = options.watchEveryMs ?? 10_000;
  if (every <= 0) return { stop: async () => undefined };
  const stuckAfter = options.stuckAfterMs ?? 30_000;
  const reader = countsReader(config, queue, consumerConnectionName(queue));
  let stopped = false;
  let checking = false;
  /** The first check since the last progress that saw jobs waiting with a slot free (null: not now). */
  let waitingSince: number | null = null;
  const check = async () => {
    const checkedAt = Date.now();
    const c = await reader.queue.getJobCounts("wait", "prioritized");
    const waiting = (c.wait ?? 0) + (c.prioritized ?? 0);
    if (stopped || waiting === 0 || progress.inProgress >= options.concurrency || progress.last >= checkedAt) {
      waitingSince = null;
      return;
    }
    if (waitingSince === null || progress.last > waitingSince) waitingSince = checkedAt;
    const now = Date.now();
    if (now - waitingSince < stuckAfter) return;
    const seen: StuckConsumer = { queue, waiting, stuckMs: now - waitingSince, inProgress: progress.inProgress, concurrency: options.concurrency, ...replace() };
    waitingSince = null;
    progress.last = now;
    try {
      options.onReplaced?.(seen);
    } catch {
      // A log line that failed changes nothing here.
    }
  };
  const timer = setInterval(() => {
    if (stopped || checking) return;
    checking = true;
    check()
      .catch(() => {
        // Redis away or slow: the outage watch says so; the count starts again once it answers.
        waitingSince = null;
      })
      .finally(() => {
        checking = false;
      });
  }, every);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await reader.close();
    },
  };
}
