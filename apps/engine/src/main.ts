import { createLogger, recordRunWork, type RunWake, type TimerDue, startTracing, timersDueJob, topics, traceRunWork } from "@holdfast/core/base";
import { databasePing, duePickDefaults } from "@holdfast/core/store";
import { GraphCache } from "@holdfast/core/versions";
import { advanceRun, DueDrain, fireTimer, onShutdown, pollOutbox, redisTargetAtStart, requireSecretKey, TimerFirer, timerWalkBackstopMs, watchOutages, workerId } from "@holdfast/core/run";
import { createDb } from "@holdfast/db";
import { checkRedis, createConsumer, DelayedError, queueNames, stuckConsumerMessage } from "@holdfast/queue";
import { env } from "./env";

const log = createLogger("engine", env.LOG_LEVEL);
const id = workerId("engine");
const tracing = await startTracing({ app: "engine", env, log, instanceId: id });
// Lost connections are said once per outage by the watch; pools and queue clients reconnect by themselves.
const redis = env.WAKEUPS === "redis" ? redisTargetAtStart(env, log) : undefined;
const outages = watchOutages({ log, database: () => databasePing(db), redis });
const db = createDb(env.DATABASE_URL, { poolSize: env.DB_POOL_SIZE, applicationName: "holdfast-engine", poolMode: env.DATABASE_POOL_MODE, onConnectionError: (e) => outages.report(e) });
await requireSecretKey(db, log);
const graphs = new GraphCache();

async function handle(data: unknown) {
  const wake = topics["run.wake"].payload.safeParse(data);
  if (!wake.success) {
    // Nothing durable rides on a message, so a malformed one is reported and dropped, never retried forever.
    log.error({ data, issues: wake.error.issues }, "malformed run.wake message dropped");
    return { dropped: "malformed" };
  }
  const result = await walk(wake.data);
  if (result.commands.length) log.debug({ orgId: wake.data.orgId, runId: wake.data.runId, ...result }, "run advanced");
  return result;
}

/** One walk of a run, a span of the run's trace when traces are exported. */
function walk(wake: RunWake) {
  return traceRunWork("walk", { orgId: wake.orgId, runId: wake.runId, attributes: { "holdfast.wake_reason": wake.reason } }, () => advanceRun(db, graphs, wake, id), (r) => ({
    "holdfast.commands": r.commands.join(",") || "none",
    "holdfast.run_status": r.status,
  }));
}

/**
 * A timer on its own: fire it (if due and current), then walk its run. Its run.wake is a backstop the walk withdraws:
 * no relay publish and no second walk for every firing. What a batch falls back to when its transaction throws.
 */
async function fireAlone(due: TimerDue) {
  const result = await fireTimer(db, due, id, timerWalkBackstopMs);
  if (result.kind === "fired") await walk({ orgId: due.orgId, runId: due.runId, reason: "timer_fired" });
  return result;
}

// The timers whose jobs arrive together are fired and their runs walked in one transaction (run/engine/fire-timers.ts).
// Each fired run's walk is a span of the run's trace, as a walk alone is (the batch's time).
const timers = new TimerFirer({
  db,
  graphs,
  actor: id,
  max: env.TIMER_FIRE_BATCH_MAX,
  alone: fireAlone,
  walked: (due, walk, startedAt, endedAt) =>
    recordRunWork(
      "walk",
      {
        orgId: due.orgId,
        runId: due.runId,
        attributes: { "holdfast.wake_reason": "timer_fired", "holdfast.commands": walk.commands.join(",") || "none", "holdfast.run_status": walk.status },
      },
      startedAt,
      endedAt,
    ),
});

/** A timer's fast-path job: fire it (if due and current) and walk the run on at once. */
async function handleTimer(data: unknown) {
  const due = topics["timer.due"].payload.safeParse(data);
  if (!due.success) {
    log.error({ data, issues: due.error.issues }, "malformed timer.due message dropped");
    return { kind: "dropped" as const };
  }
  return env.TIMER_FIRE_BATCH_MAX > 1 ? timers.fire(due.data) : fireAlone(due.data);
}

// A `timers.due` job (the timers of one relay batch due at one instant): the due sweep's batches, once the instant has
// come by the database clock, until none is due (run/engine/due-drain.ts); a job that comes during a pass joins it.
const drain = new DueDrain({ db, graphs, actor: id, pick: duePickDefaults });

async function handleTimers(data: unknown) {
  const job = timersDueJob.payload.safeParse(data);
  if (!job.success) {
    log.error({ issues: job.error.issues }, "malformed timers.due message dropped");
    return { kind: "dropped" as const };
  }
  return drain.due(job.data.dueAt);
}

/** A queue client's error: a lost connection goes to the watch (said once per outage), anything else is logged. */
function queueError(error: Error): void {
  if (!outages.report(error)) log.error({ err: error }, "queue error");
}

let stop: () => Promise<void>;
if (!redis) {
  // WAKEUPS=poll: no Redis at all.
  const abort = new AbortController();
  const poll = (topic: "run.wake" | "timer.due", run: (data: unknown) => Promise<unknown>) =>
    pollOutbox({ db, topic, lane: null, slots: env.ENGINE_CONCURRENCY, intervalMs: env.POLL_INTERVAL_MS, log, signal: abort.signal, handle: run, outages });
  const polling = [poll("run.wake", handle), poll("timer.due", handleTimer)];
  stop = async () => {
    abort.abort();
    await Promise.all(polling);
  };
} else {
  await checkRedis(redis);
  const consumer = createConsumer(
    { redis, prefix: env.QUEUE_PREFIX, onError: queueError },
    queueNames.engine,
    async (job, token) => {
      if (job.name !== "timer.due" && job.name !== timersDueJob.name) return handle(job.data);
      const result = job.name === "timer.due" ? await handleTimer(job.data) : await handleTimers(job.data);
      if (result.kind === "not_due") {
        // The queue delivered early by the database's clock: come back when it is due.
        await job.moveToDelayed(Date.now() + result.inMs + 5, token);
        throw new DelayedError();
      }
      return result;
    },
    {
      concurrency: env.ENGINE_CONCURRENCY,
      onReplaced: (seen) => log.warn(seen, stuckConsumerMessage(seen)),
    },
  );
  // A wake-up that failed for a lost connection is dropped quietly: the sweeper re-wakes the run once it is back.
  consumer.on("failed", (job, error) => {
    if (!outages.report(error)) log.error({ jobId: job?.id, job: job?.name, ...runFields(job?.data), err: error }, job?.name === timersDueJob.name ? "timers' wake-up failed" : "run wake-up failed");
  });
  await consumer.waitUntilReady();
  stop = () => consumer.close();
}
log.info({ worker: id, concurrency: env.ENGINE_CONCURRENCY, wakeups: env.WAKEUPS }, "engine ready");

onShutdown(log, async () => {
  await stop();
  outages.stop();
  await tracing.shutdown();
  await db.$disconnect();
});

/** The run a queue message is about, for the log line (orgId, runId, stepId when the payload has them). */
function runFields(data: unknown): Record<string, unknown> {
  if (!data || typeof data !== "object") return {};
  const { orgId, runId, stepId, timerId } = data as Record<string, unknown>;
  return { orgId, runId, stepId, timerId };
}
