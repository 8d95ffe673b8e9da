import { Prisma, type Tx } from "@holdfast/db";

/** One line of a run's timeline. Written in the same transaction as the transition it describes. */
export interface RunEventRow {
  orgId: string;
  runId: string;
  type: string;
  stepId?: string | null;
  nodeId?: string | null;
  attempt?: number | null;
  lane?: string | null;
  worker?: string | null;
  data?: Record<string, unknown> | null;
}

export async function runEventsInsert(tx: Tx, rows: RunEventRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map(
    (r) =>
      Prisma.sql`(${r.orgId}, ${r.runId}, ${r.stepId ?? null}, ${r.nodeId ?? null}, ${r.attempt ?? null}::int,
                  ${r.type}, ${r.lane ?? null}, ${r.worker ?? null}, ${r.data ? JSON.stringify(r.data) : null}::jsonb)`,
  );
  await tx.$executeRaw`
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    VALUES ${Prisma.join(values)}`;
}

export interface TimelineEntry {
  id: bigint;
  at: Date;
  type: string;
  stepId: string | null;
  nodeId: string | null;
  attempt: number | null;
  lane: string | null;
  worker: string | null;
  data: Record<string, unknown> | null;
}

export function runEventsForRun(tx: Tx, orgId: string, runId: string): Promise<TimelineEntry[]> {
  return tx.$queryRaw<TimelineEntry[]>`
    SELECT id, at, type, step_id AS "stepId", node_id AS "nodeId", attempt, lane, worker, data
    FROM run_events WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY id`;
}

/**
 * Up to `limit` timeline rows of these runs deleted by primary key, oldest first (the caller holds the runs' locks:
 * finished runs, whose timeline only a late repeat of the trigger still adds to). Returns how many.
 */
export function runEventsDeleteOfRuns(tx: Tx, runIds: string[], limit: number): Promise<number> {
  return tx.$executeRaw`
    DELETE FROM run_events WHERE (run_id, id) IN (
      SELECT run_id, id FROM run_events WHERE run_id = ANY(${runIds}::text[]) ORDER BY id LIMIT ${limit})`;
}
