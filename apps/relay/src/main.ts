import { createLogger, loop, onShutdown, relayOnce } from "@holdfast/core";
import { createDb } from "@holdfast/db";
import { assertNoEviction, createPublisher, redisConnection } from "@holdfast/queue";
import pg from "pg";
import { env } from "./env";

const log = createLogger("relay", env.LOG_LEVEL);
if (env.WAKEUPS === "poll") {
  // With WAKEUPS=poll the engine and lane workers take wake-ups from the outbox themselves; a relay would steal them.
  log.error("WAKEUPS=poll: consumers poll the outbox, so the relay must not run; exiting");
  process.exit(78);
}
const db = createDb(env.DATABASE_URL, { poolSize: env.DB_POOL_SIZE, applicationName: "holdfast-relay" });
const redis = redisConnection(env.REDIS_URL);
await assertNoEviction(redis);
redis.disconnect();
const publisher = createPublisher({ redisUrl: env.REDIS_URL, prefix: env.QUEUE_PREFIX });

// LISTEN for the outbox trigger's NOTIFY so intents go out as soon as they commit; polling covers a lost listener.
let notified: (() => void) | undefined;
const wake = () => new Promise<void>((resolve) => (notified = resolve));
const listener = new pg.Client({ connectionString: env.DATABASE_URL, application_name: "holdfast-relay-listen" });
listener.on("notification", () => notified?.());
listener.on("error", (error) => log.warn({ err: error }, "LISTEN connection lost; polling only"));
await listener.connect();
await listener.query("LISTEN holdfast_outbox");

const stop = new AbortController();
let total = 0;
const running = loop({
  log,
  signal: stop.signal,
  idleMs: env.RELAY_POLL_MS,
  wake,
  once: async () => {
    const { published } = await relayOnce(db, publisher, env.RELAY_BATCH_SIZE);
    total += published;
    return published > 0;
  },
});
log.info({ batch: env.RELAY_BATCH_SIZE }, "relay ready");

onShutdown(log, async () => {
  stop.abort();
  notified?.();
  await running;
  log.info({ total }, "relay stopped");
  await listener.end().catch(() => {});
  await publisher.close();
  await db.$disconnect();
});
