import { type Db, inTx } from "@holdfast/db";
import { crashpoint } from "../crash";
import { repairMissingTimers } from "../ops/doctor";
import type { GraphCache } from "../versions/graph-cache";
import { approvalsRewakeNotify } from "../sql/approvals";
import { leaderLeasesAcquireOrRenew } from "../sql/leader-leases";
import { outboxDeleteSentBefore } from "../sql/outbox";
import { runsFindStalled, runsWakeExpired } from "../sql/runs";
import { sessionsPurgeExpired } from "../sql/sessions";
import { signinThrottlePurgeExpired } from "../sql/signin-throttle";
import { stepsReclaimExpired, stepsRewakeStale } from "../sql/steps";
import { timersFireDueFairly } from "../sql/timers";

export interface SweepConfig {
  /** The due sweep: organisations per batch, timers per organisation, timers per batch, batches per tick. */
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
  /** Waits whose timer was missing, given it back. */
  timersRecreated: number;
  /** Runs past their age budget woken so the engine stops them. */
  runsExpired: number;
  /** Each run the sweep repaired, for one log line per run (orgId, runId, stepId). */
  repaired: { what: "lease_expired" | "step_rewoken" | "run_rewoken" | "run_expired"; orgId: string; runId: string; stepId?: string }[];
  /** Approvals whose Slack post or update was owed and not taken (lost wake-up, dead notifier, Slack down). */
  notifiesRewoken: number;
  /** Sessions past their absolute or idle expiry, deleted. */
  sessionsPurged: number;
  /** Sign-in throttle counters lapsed over an hour ago, deleted. */
  throttlePurged: number;
}

/**
 * The silent-failure sweep: every check looks for work that stopped moving without an error and gives it a fresh,
 * durable wake-up (an outbox row), each in its own short transaction.
 */
export async function sweepOnce(db: Db, config: SweepConfig, graphs?: GraphCache): Promise<SweepResult> {
  const t = config.timers ?? { orgs: 20, perOrg: 50, batch: 500, maxBatches: 20 };
  let timersFired = 0;
  for (let i = 0; i < t.maxBatches; i++) {
    const batch = await inTx(db, (tx) => timersFireDueFairly(tx, t.orgs, t.perOrg, t.batch, "sweeper"));
    const n = batch.fired.reduce((a, f) => a + f.count, 0);
    timersFired += n;
    if (n === 0) break; // keep draining a backlog (rotating organisations) up to maxBatches per tick
  }
  const reclaimed = await inTx(db, (tx) => stepsReclaimExpired(tx, config.batchSize));
  const rewoken = await inTx(db, (tx) => stepsRewakeStale(tx, config.staleSeconds, config.batchSize));
  const runs = await inTx(db, (tx) => runsFindStalled(tx, config.staleSeconds, config.batchSize));
  const expired = await inTx(db, (tx) => runsWakeExpired(tx, config.staleSeconds, config.batchSize));
  // A wait whose timer row is gone (the doctor's first check): its timer is re-created from the node's rule.
  const timersRecreated = graphs ? await repairMissingTimers(db, graphs, "sweeper", config.batchSize) : 0;
  const notifies = await inTx(db, (tx) => approvalsRewakeNotify(tx, config.batchSize, config.notifyLeaseSeconds ?? 30));
  const deleted = await inTx(db, (tx) => outboxDeleteSentBefore(tx, config.outboxRetentionSeconds, config.batchSize * 10));
  const sessionsPurged = await inTx(db, (tx) => sessionsPurgeExpired(tx, config.batchSize * 10));
  const throttlePurged = await inTx(db, (tx) => signinThrottlePurgeExpired(tx, config.batchSize * 10));
  crashpoint("sweeper.after_commit");
  const repaired: SweepResult["repaired"] = [
    ...reclaimed.map((w) => ({ what: "lease_expired" as const, orgId: w.orgId, runId: w.runId, stepId: w.stepId })),
    ...rewoken.map((w) => ({ what: "step_rewoken" as const, orgId: w.orgId, runId: w.runId, stepId: w.stepId })),
    ...runs.map((r) => ({ what: "run_rewoken" as const, orgId: r.orgId, runId: r.runId })),
    ...expired.map((r) => ({ what: "run_expired" as const, orgId: r.orgId, runId: r.runId })),
  ];
  return {
    timersFired,
    leasesReclaimed: reclaimed.length,
    stepsRewoken: rewoken.length,
    runsRewoken: runs.length,
    runsExpired: expired.length,
    timersRecreated,
    outboxDeleted: deleted,
    notifiesRewoken: notifies,
    sessionsPurged,
    throttlePurged,
    repaired,
  };
}

export const sweeperLeaderName = "sweeper";

/** True while this process is the elected sweeper; a crashed leader's lease lapses and a standby takes over. */
export function acquireLeadership(db: Db, owner: string, leaseMs: number): Promise<boolean> {
  return inTx(db, (tx) => leaderLeasesAcquireOrRenew(tx, sweeperLeaderName, owner, leaseMs));
}
