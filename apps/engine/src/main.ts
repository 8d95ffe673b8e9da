import { advanceRun, createLogger, GraphCache, onShutdown, pollOutbox, topics, workerId } from "@holdfast/core";
import { createDb } from "@holdfast/db";
import { assertNoEviction, createConsumer, queueNames, redisConnection } from "@holdfast/queue";
import { env } from "./env";

const log = createLogger("engine", env.LOG_LEVEL);
const id = workerId("engine");
const db = createDb(env.DATABASE_URL, { poolSize: env.DB_POOL_SIZE, applicationName: "holdfast-engine" });
const graphs = new GraphCache();

async function handle(data: unknown) {
  const wake = topics["run.wake"].payload.safeParse(data);
  if (!wake.success) {
    // Nothing durable rides on a message, so a malformed one is reported and dropped, never retried forever.
    log.error({ data, issues: wake.error.issues }, "malformed run.wake message dropped");
    return { dropped: "malformed" };
  }
  const result = await advanceRun(db, graphs, wake.data, id);
  if (result.commands.length) log.debug({ orgId: wake.data.orgId, runId: wake.data.runId, ...result }, "run advanced");
  return result;
}

let stop: () => Promise<void>;
if (env.WAKEUPS === "poll") {
  const abort = new AbortController();
  const polling = pollOutbox({
    db,
    topic: "run.wake",
    lane: null,
    slots: env.ENGINE_CONCURRENCY,
    intervalMs: env.POLL_INTERVAL_MS,
    log,
    signal: abort.signal,
    handle,
  });
  stop = async () => {
    abort.abort();
    await polling;
  };
} else {
  const redis = redisConnection(env.REDIS_URL);
  await assertNoEviction(redis);
  redis.disconnect();
  const consumer = createConsumer(
    { redisUrl: env.REDIS_URL, prefix: env.QUEUE_PREFIX },
    queueNames.engine,
    (job) => handle(job.data),
    { concurrency: env.ENGINE_CONCURRENCY },
  );
  consumer.on("failed", (job, error) => log.error({ jobId: job?.id, err: error }, "run wake-up failed"));
  await consumer.waitUntilReady();
  stop = () => consumer.close();
}
log.info({ worker: id, concurrency: env.ENGINE_CONCURRENCY, wakeups: env.WAKEUPS }, "engine ready");

onShutdown(log, async () => {
  await stop();
  await db.$disconnect();
});
