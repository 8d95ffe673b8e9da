import type { Tx } from "@holdfast/db";
import type { LaneName } from "../../base/catalog";

/** Retry from the failed step: the run's failed step found, locked, and reopened for a new round of attempts. */

export interface FailedStep {
  id: string;
  nodeId: string;
  iteration: number;
  kind: string;
  lane: LaneName;
  attempt: number;
  maxAttempts: number;
  error: Record<string, unknown> | null;
}

/** The run's failed step at `nodeId` (its latest iteration), locked: what Retry from the failed step reopens. */
export async function stepsFailedAt(tx: Tx, orgId: string, runId: string, nodeId: string): Promise<FailedStep | null> {
  const rows = await tx.$queryRaw<FailedStep[]>`
    SELECT id, node_id AS "nodeId", iteration, kind, lane, attempt, max_attempts AS "maxAttempts", error
    FROM steps WHERE org_id = ${orgId} AND run_id = ${runId} AND node_id = ${nodeId} AND status = 'failed'
    ORDER BY iteration DESC LIMIT 1 FOR UPDATE`;
  return rows[0] ?? null;
}

/**
 * Retry from the failed step: a new round of `attempts` attempts, due now, not yet walked on from. The attempt
 * counter keeps counting (it is the lease's fencing token), so the budget is raised past it, not reset.
 */
export async function stepsReopenFailed(tx: Tx, stepId: string, attempts: number): Promise<boolean> {
  return (
    (await tx.$executeRaw`
      UPDATE steps SET status = 'ready', error = NULL, output = NULL, settled_at = NULL, advanced_at = NULL,
                       available_at = now(), max_attempts = attempt + ${attempts}, updated_at = now()
      WHERE id = ${stepId} AND status = 'failed'`) === 1
  );
}
