import { createLogger, listenUrl, sleep, startTracing, topics } from "@holdfast/core/base";
import { databasePing } from "@holdfast/core/store";
import { GraphCache } from "@holdfast/core/versions";
import { notifyApproval } from "@holdfast/core/people";
import { onShutdown, pollOutbox, ReadyDemand, redisTargetAtStart, requireSecretKey, Slots, StepRunner, takeReadySteps, watchOutages, workerId } from "@holdfast/core/run";
import { createDb, createListenClient, createPool, openPool } from "@holdfast/db";
import { checkRedis, createConsumer, DelayedError, queueNames, stuckConsumerMessage, subscribeReady } from "@holdfast/queue";
import { env, lane } from "./env";

const log = createLogger(`lane-worker:${lane.name}`, env.LOG_LEVEL);
const id = workerId(`lane-${lane.name}`);
// Before any step runs: every attempt and provider call is a span of its run's trace (when an endpoint is set).
const tracing = await startTracing({ app: "lane-worker", env, log, instanceId: id });
// The hot path (claim, settle, heartbeat) has one connection per slot plus one for heartbeats, so a claimed step never
// waits for a connection; Prisma's pool serves the rest (effect ledger, graphs, outbox polling).
// Lost connections are said once per outage by the watch; both pools and the queue client reconnect by themselves.
const redis = env.WAKEUPS === "redis" ? redisTargetAtStart(env, log) : undefined;
const outages = watchOutages({ log, database: () => databasePing(db), redis });
const onConnectionError = (error: Error) => void outages.report(error);
const sql = createPool(env.DATABASE_URL, { poolSize: lane.concurrency + 1, keepOpen: true, applicationName: `holdfast-lane-${lane.name}`, poolMode: env.DATABASE_POOL_MODE, onConnectionError });
const db = createDb(env.DATABASE_URL, { poolSize: Math.min(4, lane.concurrency + 1), applicationName: `holdfast-lane-${lane.name}`, poolMode: env.DATABASE_POOL_MODE, onConnectionError });
await requireSecretKey(db, log);

// Both ways a step arrives share the lane's slots: a BullMQ job waits for one, a step taken from the outbox (on a
// NOTIFY, or by a settle batch for the slot its settle frees) only uses a free one or the one it is given, so no more
// than `concurrency` steps run at once and a claim never waits for a hot-path connection.
const slots = new Slots(lane.concurrency);
// Whether the lane is owed a look for due first steps: the LISTEN take's and the settle batches' (redis wake-ups only).
const readyDemand = env.WAKEUPS === "redis" && env.LISTEN_DISPATCH === "on" ? new ReadyDemand(slots) : undefined;

const runner = new StepRunner({
  db,
  sql,
  graphs: new GraphCache(),
  worker: id,
  lane,
  log,
  outages,
  ...(env.LOCAL_DISPATCH_MAX_CHAIN > 0 ? { localDispatch: { maxChain: env.LOCAL_DISPATCH_MAX_CHAIN } } : {}),
  settleBatch: { max: env.SETTLE_BATCH_MAX, parallel: env.SETTLE_BATCH_PARALLEL, crowd: env.SETTLE_BATCH_CROWD },
  ...(readyDemand ? { readyDemand } : {}),
});

// The hot path's connections in steady use open, and their statements planned, before the first step: a take, the
// settle batches in flight, a heartbeat and a queue job's claim (a burst opens more, and the pool keeps them). Not on a
// freshly started worker's first steps (a deploy), each of which would wait ~20 ms for a connection of its own. Not
// every slot's: the pool's size is a ceiling a burst may reach, not what runs at once, and a host of workers each
// holding LANE_CONCURRENCY + 1 idle connections from the start would press on max_connections for nothing.
const openAhead = Math.min(lane.concurrency + 1, env.SETTLE_BATCH_PARALLEL + 3);
await openPool(sql, openAhead, (connection) => runner.warm(connection)).catch((error: unknown) => {
  if (!outages.report(error)) log.warn({ err: error }, "could not open the hot path's connections ahead; they open as steps need them");
});

function parse(data: unknown) {
  const ready = topics["step.ready"].payload.safeParse(data);
  if (!ready.success || ready.data.lane !== lane.name) {
    log.error({ data }, "malformed step.ready message dropped");
    return undefined;
  }
  return ready.data;
}

/** The human lane also keeps approvals' Slack messages up to date (approval.notify, core/approvals/notify.ts). */
const notifies = lane.name === "human";
async function notify(data: unknown): Promise<string> {
  const msg = topics["approval.notify"].payload.safeParse(data);
  if (!msg.success) {
    log.error({ data }, "malformed approval.notify message dropped");
    return "dropped";
  }
  return notifyApproval(db, msg.data, { log, publicUrl: env.HOLDFAST_PUBLIC_URL ?? null, worker: id, leaseSeconds: env.APPROVAL_NOTIFY_LEASE_SECONDS });
}

let stopTaking: () => Promise<void>;
if (!redis) {
  // WAKEUPS=poll: no Redis at all.
  const abort = new AbortController();
  const polling = pollOutbox({
    db,
    topic: "step.ready",
    lane: lane.name,
    slots: lane.concurrency,
    intervalMs: env.POLL_INTERVAL_MS,
    log,
    signal: abort.signal,
    outages,
    // An early wake-up (not due) is dropped here: its outbox row was due, so the step's own row decides; the
    // sweeper re-wakes a ready step that nobody claimed.
    handle: async (payload) => {
      const ready = parse(payload);
      return ready ? runner.run(ready.stepId) : "dropped";
    },
  });
  const notifyPolling = notifies
    ? pollOutbox({ db, topic: "approval.notify", lane: null, slots: 4, intervalMs: env.POLL_INTERVAL_MS, log, signal: abort.signal, handle: notify, outages })
    : Promise.resolve();
  stopTaking = async () => {
    abort.abort();
    await Promise.all([polling, notifyPolling]);
  };
} else {
  await checkRedis(redis);
  const direct = readyDemand
      ? takeReadySteps({
          take: (limit) => runner.takeReady(limit),
          connect: () => createListenClient(listenUrl(env), `holdfast-lane-${lane.name}-listen`),
          lane: lane.name,
          slots,
          demand: readyDemand,
          log,
          outages,
          run: (step) => runner.run(step),
          bus: (onWake) => subscribeReady({ redis, prefix: env.QUEUE_PREFIX, onError: (e) => { if (!outages.report(e)) log.warn({ err: e }, "Redis wake-up subscription error"); } }, [lane.name], onWake),
        })
      : null;
  const consumer = createConsumer(
    {
      redis,
      prefix: env.QUEUE_PREFIX,
      onError: (error) => {
        if (!outages.report(error)) log.error({ err: error }, "queue error");
      },
    },
    queueNames.lane(lane.name),
    async (job, token) => {
      if (job.name === "approval.notify" && notifies) return notify(job.data);
      const ready = parse(job.data);
      if (!ready) return "dropped";
      await slots.acquire();
      let result: Awaited<ReturnType<typeof runner.run>>;
      try {
        result = await runner.run(ready.stepId);
      } finally {
        slots.release();
      }
      if (result.kind === "not_due") {
        // Come back when the database says the step is due; the sweeper is the backstop if this job is lost.
        await job.moveToDelayed(Date.now() + result.inMs + 5, token);
        throw new DelayedError();
      }
      return result.kind;
    },
    {
      concurrency: lane.concurrency,
      lockDurationMs: Math.max(60_000, lane.leaseMs * 2),
      onReplaced: (seen) => log.warn(seen, stuckConsumerMessage(seen)),
    },
  );
  consumer.on("failed", (job, error) => {
    // A step whose claim or settle failed for a lost connection: its lease lapses and the sweeper hands it on.
    if (outages.report(error)) return;
    const { orgId, runId, stepId, approvalId } = (job?.data ?? {}) as Record<string, unknown>;
    log.error({ jobId: job?.id, orgId, runId, stepId, approvalId, err: error }, "step job failed");
  });
  await consumer.waitUntilReady();
  stopTaking = async () => {
    await Promise.all([consumer.close(), direct?.close()]);
  };
}
log.info(
  { worker: id, lane: lane.name, concurrency: lane.concurrency, leaseMs: lane.leaseMs, wakeups: env.WAKEUPS, listenDispatch: env.WAKEUPS === "redis" && env.LISTEN_DISPATCH === "on", settleBatchMax: env.SETTLE_BATCH_MAX },
  "lane worker ready",
);

onShutdown(log, async () => {
  // Stop claiming, let steps in hand finish within the grace period, then release the rest at once.
  runner.stopChaining();
  const closing = stopTaking();
  const finished = await Promise.race([closing.then(() => true), sleep(env.SHUTDOWN_GRACE_MS).then(() => false)]);
  if (!finished) {
    const aborted = runner.abortAll();
    log.info({ aborted }, "grace period over: releasing leases");
    await Promise.race([closing, sleep(5_000)]);
  }
  outages.stop();
  if (runner.settles) log.info(runner.settles.stats, "settles and the statements that carried them (group commit)");
  // The last attempts' spans go out before the process exits.
  await tracing.shutdown();
  await Promise.all([db.$disconnect(), sql.end()]);
});
