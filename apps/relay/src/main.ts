import { createLogger, laneNames, listenUrl } from "@holdfast/core/base";
import { databasePing, outboxChannel, readyChannel } from "@holdfast/core/store";
import { listenChannels, loop, onShutdown, redisTargetAtStart, relayOnce, requireSecretKey, watchOutages } from "@holdfast/core/run";
import { createDb, createListenClient } from "@holdfast/db";
import { checkRedis, createPublisher, subscribeReady } from "@holdfast/queue";
import { env } from "./env";

const log = createLogger("relay", env.LOG_LEVEL);
if (env.WAKEUPS === "poll") {
  // With WAKEUPS=poll the engine and lane workers take wake-ups from the outbox themselves; a relay would steal them.
  log.error("WAKEUPS=poll: consumers poll the outbox, so the relay must not run; exiting");
  process.exit(78);
}
// Lost connections are said once per outage by the watch; pools, the publisher and the listener reconnect by themselves.
const redis = redisTargetAtStart(env, log);
const outages = watchOutages({ log, database: () => databasePing(db), redis });
const db = createDb(env.DATABASE_URL, { poolSize: env.DB_POOL_SIZE, applicationName: "holdfast-relay", poolMode: env.DATABASE_POOL_MODE, onConnectionError: (e) => outages.report(e) });
await requireSecretKey(db, log);
await checkRedis(redis);
const publisher = createPublisher({
  redis,
  prefix: env.QUEUE_PREFIX,
  onError: (error) => {
    if (!outages.report(error)) log.error({ err: error }, "queue error");
  },
});

// LISTEN for the outbox trigger's NOTIFY so intents go out as soon as they commit; polling covers a lost listener.
// A step's wake-up (step.ready) is its lane workers' first: the trigger tells their lane's channel, not this one, and
// the poll publishes what nobody took once it is RELAY_STEP_READY_GRACE_MS old. With no grace the relay is the one
// that delivers them (lane workers with LISTEN_DISPATCH=off), so it LISTENs on every lane's channel as well, and
// subscribes to the lanes' announcements on Redis, where starters tell of first steps instead (queue/wake.ts).
// A wake-up that comes while a pass runs is kept for the next idle pause, which then ends at once.
let notified: (() => void) | undefined;
let pending = false;
const notify = () => {
  if (notified) {
    const resolve = notified;
    notified = undefined;
    resolve();
  } else pending = true;
};
const wake = () => {
  if (pending) {
    pending = false;
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => (notified = resolve));
};
const listener = listenChannels({
  connect: () => createListenClient(listenUrl(env), "holdfast-relay-listen"),
  channels: env.RELAY_STEP_READY_GRACE_MS === 0 ? [outboxChannel, ...laneNames.map(readyChannel)] : [outboxChannel],
  onNotify: () => notify(),
  onListening: () => notify(),
  log,
  outages,
});

const announcements =
  env.RELAY_STEP_READY_GRACE_MS === 0
    ? subscribeReady({ redis, prefix: env.QUEUE_PREFIX, onError: (e) => { if (!outages.report(e)) log.warn({ err: e }, "Redis wake-up subscription error"); } }, laneNames, () => notify())
    : null;

const stop = new AbortController();
let total = 0;
const running = loop({
  log,
  signal: stop.signal,
  idleMs: env.RELAY_POLL_MS,
  wake,
  outages,
  once: async () => {
    // A pass is starting: a notification from now on is for the next pause (the last pause's waiter may be stale, when
    // its nap ended first).
    notified = undefined;
    const { published } = await relayOnce(db, publisher, env.RELAY_BATCH_SIZE, env.RELAY_STEP_READY_GRACE_MS);
    total += published;
    return published > 0;
  },
});
log.info({ batch: env.RELAY_BATCH_SIZE, stepReadyGraceMs: env.RELAY_STEP_READY_GRACE_MS }, "relay ready");

onShutdown(log, async () => {
  stop.abort();
  notify();
  await running;
  log.info({ total }, "relay stopped");
  outages.stop();
  await Promise.all([listener.close(), announcements?.close()]);
  await publisher.close();
  await db.$disconnect();
});
