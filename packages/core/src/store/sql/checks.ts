import type { Db, Tx } from "@holdfast/db";

/**
 * The doctor's silent-failure checks as queries (run/ops/doctor.ts says what each repair does): work that stopped moving
 * without an error. Each finds rows with the run and a detail in words, across the tables involved.
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

/** How long work may sit before a check counts it (the sweeper and the relay get their turn first). */
export const checkGraceSeconds = 30;
const graceSeconds = checkGraceSeconds;

const checkSql: Record<CheckName, string> = {
  // A wait (timer, reply deadline, approval deadline) whose timer row is gone: nothing will ever wake it.
  waiting_without_timer: `SELECT s.run_id AS "runId", s.node_id || ' (' || s.kind || ')' AS detail FROM steps s JOIN runs r ON r.id = s.run_id
        WHERE s.status = 'waiting' AND r.status = 'running'
          AND NOT EXISTS (SELECT 1 FROM timers t WHERE t.step_id = s.id AND t.fired_at IS NULL)`,
  overdue_timers: `SELECT run_id AS "runId", 'timer ' || id || ' due ' || round(EXTRACT(EPOCH FROM now() - due_at)) || ' s ago' AS detail
        FROM timers WHERE fired_at IS NULL AND due_at < now() - interval '${graceSeconds} seconds'`,
  expired_leases: `SELECT run_id AS "runId", node_id || ' held by ' || COALESCE(owner, '?') || ', lease lapsed ' || round(EXTRACT(EPOCH FROM now() - lease_until)) || ' s ago' AS detail
        FROM steps WHERE status = 'running' AND lease_until < now()`,
  // From the running runs (a partial index) to their effects (by run): effects have no index on their status, so that
  // an effect's settle stays a HOT update; an in-flight effect of a finished run has no attempt left to reconcile it.
  effects_past_lease: `SELECT e.run_id AS "runId", e.key || ' (' || e.kind || ')' AS detail FROM runs r JOIN effects e ON e.run_id = r.id
        WHERE r.status = 'running' AND e.status = 'in_flight' AND e.lease_until < now()`,
  lost_wakeups: `SELECT s.run_id AS "runId", s.node_id || ' ready for ' || round(EXTRACT(EPOCH FROM now() - s.available_at)) || ' s' AS detail
        FROM steps s JOIN runs r ON r.id = s.run_id
        WHERE s.status = 'ready' AND s.available_at < now() - interval '${graceSeconds} seconds' AND r.status = 'running'
          AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = s.run_id AND o.sent_at IS NULL)`,
  // What the sweeper re-wakes (runsFindStalled): no open step, nothing recent, no wake-up. A settled step never
  // walked counts (its run.wake was lost: the typical case); a held run does not (its resume wakes it).
  no_way_forward: `SELECT r.id AS "runId",
               CASE WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.advanced_at IS NULL AND s.status IN ('done', 'failed'))
                    THEN 'a settled step was never walked (its wake-up was lost); ' ELSE '' END
               || 'quiet for ' || round(EXTRACT(EPOCH FROM now() - GREATEST(r.updated_at, (SELECT max(s.updated_at) FROM steps s WHERE s.run_id = r.id)))) || ' s' AS detail
        FROM runs r
        WHERE r.status = 'running' AND r.held_at IS NULL AND r.updated_at < now() - interval '${graceSeconds} seconds'
          AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id
                            AND (s.status IN ('ready', 'running', 'waiting', 'parked') OR s.updated_at >= now() - interval '${graceSeconds} seconds'))
          AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.id AND o.sent_at IS NULL)`,
  past_age_budget: `SELECT id AS "runId", 'expired ' || round(EXTRACT(EPOCH FROM now() - expires_at)) || ' s ago' AS detail FROM runs
        WHERE status = 'running' AND expires_at < now() - interval '${graceSeconds} seconds'`,
  slack_posts_owed: `SELECT run_id AS "runId", 'approval ' || id || ' owes a Slack ' || notify_state AS detail FROM approvals
        WHERE notify_state IN ('post', 'update') AND updated_at < now() - interval '${graceSeconds} seconds'`,
};

/** How many rows the check finds. */
export async function checksCount(db: Db | Tx, check: CheckName): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM (${checkSql[check]}) x`);
  return rows[0]?.n ?? 0;
}

/** Up to `limit` of the rows the check finds. */
export function checksExamples(db: Db | Tx, check: CheckName, limit: number): Promise<{ runId: string; detail: string }[]> {
  return db.$queryRawUnsafe<{ runId: string; detail: string }[]>(`${checkSql[check]} LIMIT ${Math.max(0, Math.floor(limit))}`);
}
