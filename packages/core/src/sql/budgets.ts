import type { Tx } from "@holdfast/db";

/**
 * Model spend per organisation, in micros (millionths of a US dollar). A call reserves its estimate for its attempt
 * (effect key + owner) before it runs and settles the real cost after; a refused reservation parks the step.
 */
export async function budgetsReserve(tx: Tx, orgId: string, key: string, owner: string, micros: number): Promise<number | null> {
  const rows = await tx.$queryRaw<{ left: bigint | null }[]>`
    SELECT holdfast_budget_reserve(${orgId}, ${key}, ${owner}, ${Math.ceil(micros)}::bigint) AS left`;
  const left = rows[0]?.left;
  return left === null || left === undefined ? null : Number(left);
}

/** The real cost of an attempt (null: unknown, the whole reservation counts as spent). */
export function budgetsSettle(tx: Tx, orgId: string, key: string, owner: string, actualMicros: number | null): Promise<number> {
  return tx.$executeRaw`
    SELECT holdfast_budget_settle(${orgId}, ${key}, ${owner}, ${actualMicros === null ? null : Math.ceil(actualMicros)}::bigint)`;
}

export interface BudgetRow {
  allowedMicros: number;
  reservedMicros: number;
  spentMicros: number;
}

export async function budgetsOf(tx: Tx, orgId: string): Promise<BudgetRow | null> {
  const rows = await tx.$queryRaw<BudgetRow[]>`
    SELECT allowed_micros::float8 AS "allowedMicros", reserved_micros::float8 AS "reservedMicros", spent_micros::float8 AS "spentMicros"
    FROM org_budgets WHERE org_id = ${orgId}`;
  return rows[0] ?? null;
}

/**
 * Sets the organisation's allowed spend and resumes every step parked because the budget ran out (back to ready
 * with a fresh wake-up and a `step.resumed` row), in one statement. Returns how many steps resumed.
 */
export async function budgetsSetAllowed(tx: Tx, orgId: string, allowedMicros: number, actor: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH b AS (
      INSERT INTO org_budgets (org_id, allowed_micros) VALUES (${orgId}, ${Math.round(allowedMicros)}::bigint)
      ON CONFLICT (org_id) DO UPDATE SET allowed_micros = EXCLUDED.allowed_micros, updated_at = now()
      RETURNING org_id
    ), moved AS (
      UPDATE steps s SET status = 'ready', available_at = now(), error = NULL, updated_at = now(), woken_at = now()
      FROM b
      WHERE s.org_id = b.org_id AND s.status = 'parked' AND s.error->>'code' = 'budget_exhausted'
      RETURNING s.id, s.org_id, s.run_id, s.node_id, s.attempt, s.lane
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'step.ready', jsonb_build_object('orgId', org_id, 'runId', run_id, 'stepId', id, 'lane', lane)
      FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
      SELECT org_id, run_id, id, node_id, attempt, 'step.resumed', lane, ${actor}, jsonb_build_object('reason', 'budget raised')
      FROM moved
    )
    SELECT count(*)::int AS n FROM moved`;
  return rows[0]?.n ?? 0;
}

/**
 * Reservations whose attempt is over without a settle (the worker died mid-call): the call may have been charged,
 * so the reservation is counted as spent. Run by the sweeper.
 */
export async function budgetsSettleAbandoned(tx: Tx, olderThanSeconds: number): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH stale AS (
      SELECT r.org_id, r.key, r.owner FROM budget_reservations r
      WHERE r.settled_at IS NULL AND r.created_at < now() - make_interval(secs => ${olderThanSeconds})
        AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.org_id = r.org_id AND e.key = r.key AND e.owner = r.owner AND e.status = 'in_flight')
      LIMIT 100
    )
    SELECT count(*)::int AS n FROM stale CROSS JOIN LATERAL (SELECT holdfast_budget_settle(stale.org_id, stale.key, stale.owner, NULL)) settled`;
  return rows[0]?.n ?? 0;
}
