import type { Tx } from "@holdfast/db";

/** A person's action on a parked step: done with their record, sent again, or resumed with the run's others. */

export interface ParkedStepRow {
  id: string;
  nodeId: string;
  status: string;
  error: { code?: string; key?: string } | null;
}

/** One step of the run, locked (a person's action on it). */
export async function stepsLockOfRun(tx: Tx, orgId: string, runId: string, stepId: string): Promise<ParkedStepRow | undefined> {
  const rows = await tx.$queryRaw<ParkedStepRow[]>`
    SELECT id, node_id AS "nodeId", status, error FROM steps WHERE org_id = ${orgId} AND run_id = ${runId} AND id = ${stepId} FOR UPDATE`;
  return rows[0];
}

/** A reviewed step is done with the person's record as its output. */
export function stepsSettleReviewedDone(tx: Tx, stepId: string, output: unknown): Promise<number> {
  return tx.$executeRaw`
    UPDATE steps SET status = 'done', output = ${JSON.stringify(output)}::jsonb, settled_at = now(), updated_at = now()
    WHERE id = ${stepId}`;
}

/** A reviewed step runs again now; its lane (for the wake-up). */
export async function stepsReadyAgainAfterReview(tx: Tx, stepId: string): Promise<string | undefined> {
  await tx.$executeRaw`
    UPDATE steps SET status = 'ready', error = NULL, available_at = now(), updated_at = now() WHERE id = ${stepId}`;
  const rows = await tx.$queryRaw<{ lane: string }[]>`SELECT lane FROM steps WHERE id = ${stepId}`;
  return rows[0]?.lane;
}

/** The run's parked steps back to ready now, except those waiting for a review. */
export function stepsResumeParkedOfRun(tx: Tx, orgId: string, runId: string): Promise<{ id: string; nodeId: string; lane: string; reason: string | null }[]> {
  return tx.$queryRaw<{ id: string; nodeId: string; lane: string; reason: string | null }[]>`
    UPDATE steps SET status = 'ready', available_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND run_id = ${runId} AND status = 'parked' AND COALESCE(error->>'code', '') <> 'needs_review'
    RETURNING id, node_id AS "nodeId", lane, error->>'reason' AS reason`;
}
