import { type Db, inTx, type Tx } from "@holdfast/db";
import { approvalsRewakeNotify } from "../sql/approvals";
import { runEventsInsert } from "../sql/run-events";
import { runsFindStalled, runsWakeExpired } from "../sql/runs";
import { stepsReclaimExpired, stepsRewakeStale } from "../sql/steps";
import { timersFireDueFairly, timersInsert } from "../sql/timers";
import { timerFor } from "../timers/plan";
import type { GraphCache } from "../versions/graph-cache";

/**
 * The silent-failure checks: work that stopped moving without an error. Each check is a query that finds it and
 * a repair that gives it a fresh, durable way forward (never a second effect). `holdfast doctor` prints them and
 * repairs with `--repair`; the sweeper repairs the same things on its schedule; /api/health and /metrics count them.
 */
export const checkNames = [
  "waiting_without_timer",
  "overdue_timers",
  "expired_leases",
  "effects_past_lease",
  "lost_wakeups",
  "no_way_forward",
  "past_age_budget",
  "slack_posts_owed",
] as const;
export type CheckName = (typeof checkNames)[number];

export interface Finding {
  check: CheckName;
  count: number;
  /** A few examples (run ids, with the step or timer), for a person to look at. */
  examples: { runId: string; detail: string }[];
  /** What --repair does about it. */
  repair: string;
}

const graceSeconds = 30;

const queries: Record<CheckName, { sql: string; repair: string }> = {
  // A wait (timer, reply deadline, approval deadline) whose timer row is gone: nothing will ever wake it.
  waiting_without_timer: {
    sql: `SELECT s.run_id AS "runId", s.node_id || ' (' || s.kind || ')' AS detail FROM steps s JOIN runs r ON r.id = s.run_id
          WHERE s.status = 'waiting' AND r.status = 'running'
            AND NOT EXISTS (SELECT 1 FROM timers t WHERE t.step_id = s.id AND t.fired_at IS NULL)`,
    repair: "re-create the timer from the node's rule, anchored when the step started (an approval: at its deadline)",
  },
  overdue_timers: {
    sql: `SELECT run_id AS "runId", 'timer ' || id || ' due ' || round(EXTRACT(EPOCH FROM now() - due_at)) || ' s ago' AS detail
          FROM timers WHERE fired_at IS NULL AND due_at < now() - interval '${graceSeconds} seconds'`,
    repair: "fire them (the due sweep)",
  },
  expired_leases: {
    sql: `SELECT run_id AS "runId", node_id || ' held by ' || COALESCE(owner, '?') || ', lease lapsed ' || round(EXTRACT(EPOCH FROM now() - lease_until)) || ' s ago' AS detail
          FROM steps WHERE status = 'running' AND lease_until < now()`,
    repair: "reclaim the steps (their next attempt reads the effect ledger first)",
  },
  effects_past_lease: {
    sql: `SELECT run_id AS "runId", key || ' (' || kind || ')' AS detail FROM effects WHERE status = 'in_flight' AND lease_until < now()`,
    repair: "none directly: the step's next attempt reconciles, re-sends with the same key, or parks it for review",
  },
  lost_wakeups: {
    sql: `SELECT s.run_id AS "runId", s.node_id || ' ready for ' || round(EXTRACT(EPOCH FROM now() - s.available_at)) || ' s' AS detail
          FROM steps s JOIN runs r ON r.id = s.run_id
          WHERE s.status = 'ready' AND s.available_at < now() - interval '${graceSeconds} seconds' AND r.status = 'running'
            AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = s.run_id AND o.sent_at IS NULL)`,
    repair: "write a fresh step.ready wake-up",
  },
  // What the sweeper re-wakes (runsFindStalled): no open step, nothing recent, no wake-up. A settled step never
  // walked counts (its run.wake was lost: the typical case); a held run does not (its resume wakes it).
  no_way_forward: {
    sql: `SELECT r.id AS "runId",
                 CASE WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.advanced_at IS NULL AND s.status IN ('done', 'failed'))
                      THEN 'a settled step was never walked (its wake-up was lost); ' ELSE '' END
                 || 'quiet for ' || round(EXTRACT(EPOCH FROM now() - r.updated_at)) || ' s' AS detail
          FROM runs r
          WHERE r.status = 'running' AND r.held_at IS NULL AND r.updated_at < now() - interval '${graceSeconds} seconds'
            AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id
                              AND (s.status IN ('ready', 'running', 'waiting', 'parked') OR s.updated_at >= now() - interval '${graceSeconds} seconds'))
            AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.id AND o.sent_at IS NULL)`,
    repair: "wake the run: the engine walks on, or fails it with the reason where a person sees it",
  },
  past_age_budget: {
    sql: `SELECT id AS "runId", 'expired ' || round(EXTRACT(EPOCH FROM now() - expires_at)) || ' s ago' AS detail FROM runs
          WHERE status = 'running' AND expires_at < now() - interval '${graceSeconds} seconds'`,
    repair: "wake the run: the engine stops it with the age-budget reason",
  },
  slack_posts_owed: {
    sql: `SELECT run_id AS "runId", 'approval ' || id || ' owes a Slack ' || notify_state AS detail FROM approvals
          WHERE notify_state IN ('post', 'update') AND updated_at < now() - interval '${graceSeconds} seconds'`,
    repair: "wake the human lane's notifier",
  },
};

/** Every check's findings (counts and up to `examples` examples each). Read-only. */
export async function runChecks(db: Db, examples = 5): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const check of checkNames) {
    const { sql, repair } = queries[check];
    const [{ n }] = (await db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM (${sql}) x`)) as [{ n: number }];
    const rows = n > 0 ? await db.$queryRawUnsafe<{ runId: string; detail: string }[]>(`${sql} LIMIT ${Math.max(0, Math.floor(examples))}`) : [];
    out.push({ check, count: n, examples: rows, repair });
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
  const lost = await db.$queryRaw<{ id: string; orgId: string; runId: string; nodeId: string; versionId: string; input: unknown; createdAt: Date; deadlineAt: Date | null }[]>`
    SELECT s.id, s.org_id AS "orgId", s.run_id AS "runId", s.node_id AS "nodeId", r.version_id AS "versionId", r.input,
           s.created_at AS "createdAt", a.deadline_at AS "deadlineAt"
    FROM steps s JOIN runs r ON r.id = s.run_id LEFT JOIN approvals a ON a.step_id = s.id
    WHERE s.status = 'waiting' AND r.status = 'running'
      AND NOT EXISTS (SELECT 1 FROM timers t WHERE t.step_id = s.id AND t.fired_at IS NULL)
    ORDER BY s.created_at LIMIT ${limit}`;
  let repaired = 0;
  for (const s of lost) {
    const done = await inTx(db, async (tx: Tx) => {
      // Under the step's lock: still waiting, still without a timer (a concurrent repair or a signal may have won).
      const still = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM steps WHERE id = ${s.id} AND status = 'waiting' FOR UPDATE`;
      if (!still.length) return false;
      const has = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM timers WHERE step_id = ${s.id} AND fired_at IS NULL`;
      if ((has[0]?.n ?? 0) > 0) return false;
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
