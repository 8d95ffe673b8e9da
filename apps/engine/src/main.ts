import { advanceRun, createLogger, GraphCache, onShutdown, topics, workerId } from "@holdfast/core";
import { createDb } from "@holdfast/db";
import { assertNoEviction, createConsumer, queueNames, redisConnection } from "@holdfast/queue";
import { env } from "./env";

const log = createLogger("engine", env.LOG_LEVEL);
const id = workerId("engine");
const db = createDb(env.DATABASE_URL, { poolSize: env.DB_POOL_SIZE, applicationName: "holdfast-engine" });
const redis = redisConnection(env.REDIS_URL);
await assertNoEviction(redis);
redis.disconnect();

const graphs = new GraphCache();
const consumer = createConsumer(
  { redisUrl: env.REDIS_URL, prefix: env.QUEUE_PREFIX },
  queueNames.engine,
  async (job) => {
    const wake = topics["run.wake"].payload.safeParse(job.data);
    if (!wake.success) {
      // Nothing durable rides on a message, so a malformed one is reported and dropped, never retried forever.
      log.error({ jobId: job.id, issues: wake.error.issues }, "malformed run.wake message dropped");
      return { dropped: "malformed" };
    }
    const result = await advanceRun(db, graphs, wake.data, id);
    if (result.commands.length) {
      log.debug({ orgId: wake.data.orgId, runId: wake.data.runId, ...result }, "run advanced");
    }
    return result;
  },
  { concurrency: env.ENGINE_CONCURRENCY },
);
consumer.on("failed", (job, error) => log.error({ jobId: job?.id, err: error }, "run wake-up failed"));
await consumer.waitUntilReady();
log.info({ worker: id, concurrency: env.ENGINE_CONCURRENCY }, "engine ready");

onShutdown(log, async () => {
  await consumer.close();
  await db.$disconnect();
});
