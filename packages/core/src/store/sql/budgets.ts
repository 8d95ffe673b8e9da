import { type Db, inTx, type Tx } from "@holdfast/db";
import { stepsResumeParked } from "./connection-limits";

/**
 * A new organisation's model budget per month, in US dollars: set by the database when the organisation is created
 * (functions/org_default_budget.sql; a test holds the two equal).
 */
export const defaultModelBudgetUsd = 20;

/**
 * Model spend per organisation and calendar month (UTC), in micros (millionths of a US dollar). A call reserves its estimate for its attempt
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

/** What a month's spend is measured against: allowed, reserved and spent this calendar month (UTC). */
export interface BudgetRow {
  allowedMicros: number;
  reservedMicros: number;
  spentMicros: number;
}

export async function budgetsOf(tx: Tx, orgId: string): Promise<BudgetRow | null> {
  const rows = await tx.$queryRaw<BudgetRow[]>`
    SELECT allowed_micros::float8 AS "allowedMicros", reserved_micros::float8 AS "reservedMicros",
           (CASE WHEN period_start < (date_trunc('month', now() AT TIME ZONE 'UTC'))::date THEN 0 ELSE spent_micros END)::float8 AS "spentMicros"
    FROM org_budgets WHERE org_id = ${orgId}`;
  return rows[0] ?? null;
}

/** Sets the organisation's allowed spend (store/sql/connection-limits.ts resumes the steps parked on budget_exhausted). */
export function budgetsUpsertAllowed(tx: Tx, orgId: string, allowedMicros: number): Promise<number> {
  return tx.$executeRaw`
    INSERT INTO org_budgets (org_id, allowed_micros) VALUES (${orgId}, ${Math.round(allowedMicros)}::bigint)
    ON CONFLICT (org_id) DO UPDATE SET allowed_micros = EXCLUDED.allowed_micros, updated_at = now()`;
}

/** Sets the allowed spend and resumes every step parked because the budget ran out, in one transaction. */
export function budgetsSetAllowed(db: Db, orgId: string, allowedMicros: number, actor: string): Promise<number> {
  return inTx(db, async (tx) => {
    await budgetsUpsertAllowed(tx, orgId, allowedMicros);
    return stepsResumeParked(tx, orgId, { code: "budget_exhausted" }, actor);
  });
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
        AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.org_id = r.org_id AND e.key = r.key AND e.owner = r.owner
                          AND e.status = 'in_flight' AND e.lease_until >= now())
      LIMIT 100
    )
    SELECT count(*)::int AS n FROM stale CROSS JOIN LATERAL (SELECT holdfast_budget_settle(stale.org_id, stale.key, stale.owner, NULL)) settled`;
  return rows[0]?.n ?? 0;
}

/** The organisation's model connections with their prices (micro-dollars per million tokens), for the budget page. */
export function budgetsModelPrices(tx: Db | Tx, orgId: string): Promise<{ name: string; model: string | null; inputMicrosPerMTok: number | null; outputMicrosPerMTok: number | null }[]> {
  return tx.$queryRaw`
    SELECT name, config->>'model' AS model, (config->>'inputMicrosPerMTok')::float8 AS "inputMicrosPerMTok",
           (config->>'outputMicrosPerMTok')::float8 AS "outputMicrosPerMTok"
    FROM connections WHERE org_id = ${orgId} AND kind = 'model' ORDER BY name`;
}
