import type { Tx } from "@holdfast/db";
import type { RunRow } from "./runs";

/** Retry from the failed step and Run again: the run locked to decide, reopened, and the runs that repeat it. */

export interface RunForRetry {
  id: string;
  automationId: string;
  versionId: string;
  status: RunRow["status"];
  input: unknown;
  error: { reason?: string; nodeId?: string | null; budget?: string } | null;
  test: boolean;
  rerunOf: string | null;
}

/** A run with what retry and rerun need to decide, locked like the engine's walk. */
export async function runsLockForRetry(tx: Tx, orgId: string, runId: string): Promise<RunForRetry | null> {
  const rows = await tx.$queryRaw<RunForRetry[]>`
    SELECT id, automation_id AS "automationId", version_id AS "versionId", status, input, error, test, rerun_of AS "rerunOf"
    FROM runs WHERE org_id = ${orgId} AND id = ${runId} FOR UPDATE`;
  return rows[0] ?? null;
}

/** What Run again repeats: the run's automation, input and status (no lock: the new run is a new row). */
export async function runsForRerun(tx: Tx, orgId: string, runId: string): Promise<{ automationId: string; input: unknown; status: RunRow["status"] } | null> {
  const rows = await tx.$queryRaw<{ automationId: string; input: unknown; status: RunRow["status"] }[]>`
    SELECT automation_id AS "automationId", input, status FROM runs WHERE org_id = ${orgId} AND id = ${runId}`;
  return rows[0] ?? null;
}

/** Retry from the failed step: the failed run is running again. */
export async function runsReopenFailed(tx: Tx, orgId: string, runId: string): Promise<boolean> {
  return (
    (await tx.$executeRaw`
      UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, updated_at = now(), seq = seq + 1
      WHERE org_id = ${orgId} AND id = ${runId} AND status = 'failed'`) === 1
  );
}

/** Runs that repeat `runId` ("Run again"), newest first. */
export function runsReruns(tx: Tx, orgId: string, runId: string): Promise<{ id: string; status: string; createdAt: Date }[]> {
  return tx.$queryRaw`
    SELECT id, status, created_at AS "createdAt" FROM runs WHERE org_id = ${orgId} AND rerun_of = ${runId}
    ORDER BY created_at DESC LIMIT 20`;
}

/** The run this one repeats (Run again), if any. */
export async function runsRerunOf(tx: Tx, orgId: string, runId: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ rerunOf: string | null }[]>`SELECT rerun_of AS "rerunOf" FROM runs WHERE org_id = ${orgId} AND id = ${runId}`;
  return rows[0]?.rerunOf ?? null;
}
