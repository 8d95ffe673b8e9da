import type { Db, Tx } from "@holdfast/db";

/** Steps as people see them: the run page's list, and counts for health and budgets. */

/** Per lane: due ready steps and how long the oldest has waited (seconds), running and parked steps. */
export function stepsCountByLane(db: Db | Tx): Promise<{ lane: string; ready: number; oldest: number; running: number; parked: number }[]> {
  return db.$queryRaw<{ lane: string; ready: number; oldest: number; running: number; parked: number }[]>`
    SELECT lane,
           count(*) FILTER (WHERE status = 'ready' AND available_at <= now())::int AS ready,
           COALESCE(EXTRACT(EPOCH FROM now() - min(available_at) FILTER (WHERE status = 'ready' AND available_at <= now())), 0)::float8 AS oldest,
           count(*) FILTER (WHERE status = 'running')::int AS running,
           count(*) FILTER (WHERE status = 'parked')::int AS parked
    FROM steps WHERE status IN ('ready', 'running', 'parked') GROUP BY lane`;
}

/** Steps of the organisation parked because the model budget ran out. */
export async function stepsCountParkedForBudget(db: Db | Tx, orgId: string): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM steps WHERE org_id = ${orgId} AND status = 'parked' AND error->>'code' = 'budget_exhausted'`;
  return rows[0]?.n ?? 0;
}

/** A step as the run page shows it. */
export interface StepView {
  id: string;
  nodeId: string;
  iteration: number;
  kind: string;
  lane: string;
  status: string;
  attempt: number;
  maxAttempts: number;
  /** Times given back unstarted for want of a connection slot: `attempt` counts them, real attempts do not. */
  deferrals: number;
  owner: string | null;
  leaseUntil: Date | null;
  availableAt: Date;
  output: unknown;
  error: { code?: string; message?: string; reason?: string; key?: string } | null;
  createdAt: Date;
  settledAt: Date | null;
}

export function stepsViewOfRun(db: Db | Tx, orgId: string, runId: string): Promise<StepView[]> {
  return db.$queryRaw<StepView[]>`
    SELECT id, node_id AS "nodeId", iteration, kind, lane, status, attempt, max_attempts AS "maxAttempts", deferrals, owner,
           lease_until AS "leaseUntil", available_at AS "availableAt", output, error, created_at AS "createdAt", settled_at AS "settledAt"
    FROM steps WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY created_at, id`;
}
