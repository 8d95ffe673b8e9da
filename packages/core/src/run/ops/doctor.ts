import { type Db, inTx, type Tx } from "@holdfast/db";
import { approvalsRewakeNotify } from "../../store/sql/approvals";
import { type CheckName, checkGraceSeconds as graceSeconds, checkNames, checksCount, checksExamples } from "../../store/sql/checks";
import { runEventsInsert } from "../../store/sql/run-events";
import { runsFindStalled, runsWakeExpired } from "../../store/sql/runs-sweep";
import { stepsLockIfWaiting } from "../../store/sql/steps";
import { type LostWaitRow, stepsReclaimExpired, stepsRewakeStale, stepsWaitingWithoutTimer } from "../../store/sql/steps-sweep";
import { timersFireDueFairly, timersInsert, timersUnfiredCountForStep } from "../../store/sql/timers";
import { timerFor } from "../../decide/timers/plan";
import type { GraphCache } from "../../versions/graph-cache";

/**
 * The silent-failure checks: work that stopped moving without an error. Each check is a query that finds it and
 * a repair that gives it a fresh, durable way forward (never a second effect). `holdfast doctor` prints them and
 * repairs with `--repair`; the sweeper repairs the same things on its schedule; /api/health and /metrics count them.
 */
export { type CheckName, checkNames };

export interface Finding {
  check: CheckName;
  count: number;
  /** A few examples (run ids, with the step or timer), for a person to look at. */
  examples: { runId: string; detail: string }[];
  /** What --repair does about it. */
  repair: string;
}

/** What --repair does about each check (the queries are store/sql/checks.ts). */
const repairs: Record<CheckName, string> = {
  waiting_without_timer: "re-create the timer from the node's rule, anchored when the step started (an approval: at its deadline)",
  overdue_timers: "fire them (the due sweep)",
  expired_leases: "reclaim the steps (their next attempt reads the effect ledger first)",
  effects_past_lease: "none directly: the step's next attempt reconciles, re-sends with the same key, or parks it for review",
  lost_wakeups: "write a fresh step.ready wake-up",
  no_way_forward: "wake the run: the engine walks on, or fails it with the reason where a person sees it",
  past_age_budget: "wake the run: the engine stops it with the age-budget reason",
  slack_posts_owed: "wake the human lane's notifier",
};

/** Every check's findings (counts and up to `examples` examples each). Read-only. */
export async function runChecks(db: Db, examples = 5): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const check of checkNames) {
    const n = await checksCount(db, check);
    const rows = n > 0 ? await checksExamples(db, check, examples) : [];
    out.push({ check, count: n, examples: rows, repair: repairs[check] });
  }
  return out;
}

export type RepairReport = Partial<Record<CheckName, number>>;

/**
 * Repairs what can be repaired safely: every repair writes a durable wake-up (or a timer) in its own transaction;
 * none calls a provider. Safe to run while the product runs, and to run twice.
 */
export async function repairAll(db: Db, graphs: GraphCache, by = "doctor", batch = 500): Promise<RepairReport> {
  const report: RepairReport = {};
  report.waiting_without_timer = await repairMissingTimers(db, graphs, by, batch);
  let fired = 0;
  for (let i = 0; i < 20; i++) {
    const b = await inTx(db, (tx) => timersFireDueFairly(tx, 50, 50, batch, by));
    const n = b.fired.reduce((a, f) => a + f.count, 0);
    fired += n;
    if (n === 0) break;
  }
  report.overdue_timers = fired;
  report.expired_leases = (await inTx(db, (tx) => stepsReclaimExpired(tx, batch))).length;
  report.lost_wakeups = (await inTx(db, (tx) => stepsRewakeStale(tx, graceSeconds, batch))).length;
  report.no_way_forward = (await inTx(db, (tx) => runsFindStalled(tx, graceSeconds, batch))).length;
  report.past_age_budget = (await inTx(db, (tx) => runsWakeExpired(tx, graceSeconds, batch))).length;
  report.slack_posts_owed = await inTx(db, (tx) => approvalsRewakeNotify(tx, batch, graceSeconds));
  return report;
}

/** Waits whose timer is gone get it back: from the node's rule anchored at the step's start, or the approval's deadline. */
export async function repairMissingTimers(db: Db, graphs: GraphCache, by: string, limit = 500): Promise<number> {
  return repairLostWaits(db, graphs, by, await stepsWaitingWithoutTimer(db, limit));
}

/** The repair of waits found without a timer (`stepsWaitingWithoutTimer`), each in its own transaction. */
export async function repairLostWaits(db: Db, graphs: GraphCache, by: string, lost: LostWaitRow[]): Promise<number> {
  let repaired = 0;
  for (const s of lost) {
    const done = await inTx(db, async (tx: Tx) => {
      // Under the step's lock: still waiting, still without a timer (a concurrent repair or a signal may have won).
      if (!(await stepsLockIfWaiting(tx, s.id))) return false;
      if ((await timersUnfiredCountForStep(tx, s.id)) > 0) return false;
      const graph = await graphs.get(tx, s.orgId, s.versionId);
      const node = graph.nodes.find((n) => n.id === s.nodeId);
      if (!node) return false;
      const config =
        node.kind === "wait"
          ? node.config
          : node.kind === "wait_for_reply"
            ? { rule: { kind: "duration" as const, seconds: node.config.timeoutSeconds }, spreadSeconds: 0 }
            : node.kind === "approval"
              ? { rule: { kind: "duration" as const, seconds: Math.max(0, ((s.deadlineAt?.getTime() ?? s.createdAt.getTime()) - s.createdAt.getTime()) / 1000) }, spreadSeconds: 0 }
              : null;
      if (!config) return false;
      const timer = timerFor(config, s.runId, s.input, s.createdAt);
      const written = await timersInsert(tx, { ...timer, orgId: s.orgId, runId: s.runId, stepId: s.id });
      await runEventsInsert(tx, [
        { orgId: s.orgId, runId: s.runId, stepId: s.id, nodeId: s.nodeId, type: "timer.recreated", worker: by, data: { timerId: written.id, dueAt: timer.dueAt.toISOString() } },
      ]);
      return true;
    });
    if (done) repaired++;
  }
  return repaired;
}
