import type { Db } from "@holdfast/db";
import { crashpoint } from "../../base/crash";
import { GraphCache } from "../../versions/graph-cache";
import type { SweepContext } from "./service";
import * as s from "./services";

export interface SweepConfig {
  /** The due sweep: organisations per batch, timers per organisation, timers per batch, batches per run. */
  timers?: { orgs: number; perOrg: number; batch: number; maxBatches: number };
  /** How long a ready step or a quiet run may sit before the sweeper assumes its wake-up was lost. */
  staleSeconds: number;
  batchSize: number;
  outboxRetentionSeconds: number;
  /** An approval's Slack notification not finished within this many seconds is taken again (default 30). */
  notifyLeaseSeconds?: number;
}

export interface SweepResult {
  timersFired: number;
  leasesReclaimed: number;
  stepsRewoken: number;
  runsRewoken: number;
  outboxDeleted: number;
  /** Waits whose timer was missing, given it back (only with `graphs`). */
  timersRecreated: number;
  /** Runs past their age budget woken so the engine stops them. */
  runsExpired: number;
  notifiesRewoken: number;
  sessionsPurged: number;
  throttlePurged: number;
}

/**
 * Every database repair service once, in the leader's order, with one set of settings: for tests and one-off
 * repairs. The sweeper process runs the services each at its own interval (runner.ts); the services that reach
 * outside the database (connection probes and notices) and breaker probes and budget reaping are not in here.
 */
export async function sweepOnce(db: Db, config: SweepConfig, graphs?: GraphCache): Promise<SweepResult> {
  const ctx: SweepContext = { db, actor: "sweeper", graphs: graphs ?? new GraphCache(), systemMail: null };
  const batch = config.batchSize;
  const stale = { batch, staleSeconds: config.staleSeconds };
  const timers = await s.dueTimers.make(config.timers ?? {}).runOnce(ctx);
  const leases = await s.leaseRescue.make({ batch }).runOnce(ctx);
  const steps = await s.staleWakeups.make(stale).runOnce(ctx);
  const runs = await s.stalledRuns.make(stale).runOnce(ctx);
  const expired = await s.expiredRuns.make(stale).runOnce(ctx);
  const missing = graphs ? await s.missingTimers.make({ batch }).runOnce(ctx) : { recreated: 0 };
  const notifies = await s.owedNotifications.make({ batch, ...(config.notifyLeaseSeconds ? { leaseSeconds: config.notifyLeaseSeconds } : {}) }).runOnce(ctx);
  const outbox = await s.outboxRetention.make({ batch: batch * 10, retentionSeconds: config.outboxRetentionSeconds }).runOnce(ctx);
  const sessions = await s.sessionPurge.make({ batch: batch * 10 }).runOnce(ctx);
  const throttle = await s.throttlePurge.make({ batch: batch * 10 }).runOnce(ctx);
  crashpoint("sweeper.after_commit");
  return {
    timersFired: timers.fired,
    leasesReclaimed: leases.reclaimed,
    stepsRewoken: steps.rewoken,
    runsRewoken: runs.rewoken,
    runsExpired: expired.woken,
    timersRecreated: missing.recreated,
    outboxDeleted: outbox.deleted,
    notifiesRewoken: notifies.rewoken,
    sessionsPurged: sessions.purged,
    throttlePurged: throttle.purged,
  };
}
