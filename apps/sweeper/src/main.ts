import {
  GraphCache,
  acquireLeadership,
  createLogger,
  leaderLeasesRelease,
  loop,
  onShutdown,
  breakersWakeProbes,
  budgetsSettleAbandoned,
  probeStaleConnections,
  sleep,
  sweeperLeaderName,
  sendConnectionNoticesOnce,
  sweepOnce,
  systemMailFrom,
  workerId,
  requireSecretKey,
  watchOutages,
} from "@holdfast/core";
import { createDb } from "@holdfast/db";
import { env } from "./env";

const log = createLogger("sweeper", env.LOG_LEVEL);
const systemMail = systemMailFrom(env);
const id = workerId("sweeper");
// Lost connections are said once per outage by the watch; the pool reconnects by itself and the sweep goes on.
const outages = watchOutages({ log, database: () => db.$queryRawUnsafe("SELECT 1") });
const db = createDb(env.DATABASE_URL, { poolSize: Math.min(env.DB_POOL_SIZE, 4), applicationName: "holdfast-sweeper", onConnectionError: (e) => outages.report(e) });
await requireSecretKey(db, log);
const stop = new AbortController();
const graphs = new GraphCache();
let leading = false;

const running = loop({
  log,
  signal: stop.signal,
  idleMs: env.SWEEP_INTERVAL_MS,
  outages,
  once: async () => {
    const lead = await acquireLeadership(db, id, env.LEADER_LEASE_MS);
    if (lead !== leading) log.info({ worker: id }, lead ? "became sweeper leader" : "lost sweeper leadership");
    leading = lead;
    if (!lead) return false;
    const result = await sweepOnce(db, {
      staleSeconds: env.SWEEP_STALE_SECONDS,
      batchSize: env.SWEEP_BATCH_SIZE,
      outboxRetentionSeconds: env.OUTBOX_RETENTION_SECONDS,
      notifyLeaseSeconds: env.APPROVAL_NOTIFY_LEASE_SECONDS,
      timers: { orgs: env.TIMER_SWEEP_ORGS, perOrg: env.TIMER_SWEEP_PER_ORG, batch: env.TIMER_SWEEP_BATCH, maxBatches: env.TIMER_SWEEP_MAX_BATCHES },
    }, graphs);
    const { repaired, ...counts } = result;
    if (repaired.length || result.timersRecreated || result.notifiesRewoken) log.info(counts, "sweep found stopped work");
    for (const r of repaired) log.info(r, `sweep repaired a run: ${r.what}`);
    if (result.timersFired) log.debug({ timersFired: result.timersFired }, "due sweep fired timers");
    if (result.sessionsPurged || result.throttlePurged) {
      log.debug({ sessionsPurged: result.sessionsPurged, throttlePurged: result.throttlePurged }, "purged expired sessions and sign-in counters");
    }
    if (env.CONNECTION_PROBE_SECONDS > 0) {
      // A few per tick, so a slow mail server never holds up the sweep; failures are logged, never fatal.
      const probed = await probeStaleConnections(db, env.CONNECTION_PROBE_SECONDS, 5).catch((err) => {
        if (!outages.report(err)) log.warn({ err }, "connection probe failed");
        return null;
      });
      if (probed && (probed.needs_reconnect || probed.unreachable)) log.warn(probed, "connection probe found broken connections");
    }
    // Owners' emails for broken connections (one per break, connection_notices), through the system mailbox.
    const notices = await sendConnectionNoticesOnce(db, systemMail).catch((err) => {
      if (!outages.report(err)) log.warn({ err }, "connection notices failed");
      return null;
    });
    if (notices && (notices.sent || notices.failed || notices.retrying)) log.info(notices, "connection notices emailed");
    // Breakers open past their cool-down with steps parked on them: wake one step to be the half-open probe.
    const probes = await breakersWakeProbes(db, "sweeper");
    if (probes) log.info({ probes }, "woke breaker probes");
    // Model budget reservations whose attempt ended without a settle (a worker died mid-call): counted as spent.
    const abandoned = await budgetsSettleAbandoned(db, 600);
    if (abandoned) log.info({ abandoned }, "settled abandoned model budget reservations");
    // A full batch means more is waiting: go again after a short breath rather than a whole interval.
    const full = Math.max(result.leasesReclaimed, result.stepsRewoken, result.runsRewoken) >= env.SWEEP_BATCH_SIZE;
    if (full) await sleep(50);
    return full;
  },
});
log.info({ worker: id, intervalMs: env.SWEEP_INTERVAL_MS }, "sweeper ready");

onShutdown(log, async () => {
  stop.abort();
  await running;
  outages.stop();
  if (leading) await db.$transaction((tx) => leaderLeasesRelease(tx, sweeperLeaderName, id));
  await db.$disconnect();
});
