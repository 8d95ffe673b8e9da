import { Prisma, type Tx } from "@holdfast/db";
import { z } from "zod";

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

/** A run's timeline, oldest first, each chained step's claim shown as its own step.claimed (withChainedClaims). */
export async function runEventsForRun(tx: Tx, orgId: string, runId: string): Promise<TimelineEntry[]> {
  const rows = await tx.$queryRaw<TimelineEntry[]>`
    SELECT id, at, type, step_id AS "stepId", node_id AS "nodeId", attempt, lane, worker, data
    FROM run_events WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY id`;
  return withChainedClaims(rows);
}

const chainedClaim = z.object({ stepId: z.string(), nodeId: z.string(), iteration: z.number().int() });

/**
 * A settle that claimed the run's next step for its worker (local dispatch) writes no row for that claim: its own row
 * says it in data.next (holdfast_step_settle). Here that claim becomes the step's step.claimed entry, as a claimed
 * step's own row would read (attempt 1, the settle's worker and lane, its iteration), placed after the last row of
 * the settle's commit (the rows of one transaction share its time), where the walk's rows put it; `next` leaves the
 * settle's data. Entries keep their row's id: a row and the claim it carries share one (tell them apart by type).
 */
export function withChainedClaims(rows: TimelineEntry[]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const pending: { claim: TimelineEntry; at: number }[] = [];
  const flush = (before: TimelineEntry | null) => {
    while (pending.length && (!before || before.at.getTime() !== pending[0]?.at)) out.push((pending.shift() as { claim: TimelineEntry }).claim);
  };
  for (const row of rows) {
    flush(row);
    const next = row.data && "next" in row.data ? chainedClaim.safeParse(row.data.next) : null;
    if (!next?.success) {
      out.push(row);
      continue;
    }
    const { next: _, ...data } = row.data as Record<string, unknown>;
    out.push({ ...row, data: Object.keys(data).length ? data : null });
    pending.push({
      at: row.at.getTime(),
      claim: { id: row.id, at: row.at, type: "step.claimed", stepId: next.data.stepId, nodeId: next.data.nodeId, attempt: 1, lane: row.lane, worker: row.worker, data: { iteration: next.data.iteration } },
    });
  }
  flush(null);
  return out;
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
