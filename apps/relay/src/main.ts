import { createLogger, databasePing, loop, onShutdown, outboxListen, relayOnce, requireSecretKey, watchOutages } from "@holdfast/core";
import { createDb } from "@holdfast/db";
import { checkRedis, createPublisher } from "@holdfast/queue";
import pg from "pg";
import { env } from "./env";

const log = createLogger("relay", env.LOG_LEVEL);
if (env.WAKEUPS === "poll") {
  // With WAKEUPS=poll the engine and lane workers take wake-ups from the outbox themselves; a relay would steal them.
  log.error("WAKEUPS=poll: consumers poll the outbox, so the relay must not run; exiting");
  process.exit(78);
}
// Lost connections are said once per outage by the watch; pools, the publisher and the listener reconnect by themselves.
const outages = watchOutages({ log, database: () => databasePing(db), redisUrl: env.REDIS_URL });
const db = createDb(env.DATABASE_URL, { poolSize: env.DB_POOL_SIZE, applicationName: "holdfast-relay", onConnectionError: (e) => outages.report(e) });
await requireSecretKey(db, log);
await checkRedis(env.REDIS_URL);
const publisher = createPublisher({
  redisUrl: env.REDIS_URL,
  prefix: env.QUEUE_PREFIX,
  onError: (error) => {
    if (!outages.report(error)) log.error({ err: error }, "queue error");
  },
});

// LISTEN for the outbox trigger's NOTIFY so intents go out as soon as they commit; polling covers a lost listener.
let notified: (() => void) | undefined;
const wake = () => new Promise<void>((resolve) => (notified = resolve));
let listener: pg.Client | undefined;
let closing = false;
async function listen(): Promise<void> {
  const client = new pg.Client({ connectionString: env.DATABASE_URL, application_name: "holdfast-relay-listen" });
  const again = (error?: Error) => {
    if (closing || listener !== client) return;
    listener = undefined;
    // During an outage the watch says it once; every failed attempt to listen again would otherwise be a line.
    if (!error || !outages.report(error)) log.warn({ err: error }, "LISTEN connection lost; polling until it is back");
    client.end().catch(() => {});
    setTimeout(() => listen().catch(() => {}), 1_000);
  };
  listener = client;
  client.on("notification", () => notified?.());
  client.on("error", again);
  client.on("end", () => again());
  try {
    await client.connect();
    await outboxListen(client);
  } catch (error) {
    again(error as Error);
  }
}
await listen();

const stop = new AbortController();
let total = 0;
const running = loop({
  log,
  signal: stop.signal,
  idleMs: env.RELAY_POLL_MS,
  wake,
  outages,
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
  closing = true;
  outages.stop();
  await listener?.end().catch(() => {});
  await publisher.close();
  await db.$disconnect();
});
