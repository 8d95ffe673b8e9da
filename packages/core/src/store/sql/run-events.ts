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

/** A settle row's data.chained that names its claimed step by node and iteration, not by id (older rows): `data` is the column's expression. */
const chainedByNode = (data: "data" | "e.data") => Prisma.raw(`jsonb_typeof(${data}->'chained') = 'object' AND NOT ${data}->'chained' ? 'stepId'`);

/** A run's timeline, oldest first, each chained step's claim shown as its own step.claimed (withChainedClaims). */
export async function runEventsForRun(tx: Tx, orgId: string, runId: string): Promise<TimelineEntry[]> {
  // A settle's data.chained names its claimed step by node and iteration; the step's id is read from the run's steps
  // (older rows name it themselves; a step no longer kept reads as null). A migration that renames the step's node
  // renames the reference too (runEventsRenameChained). Compared as numeric: a value no integer reads as no step.
  const rows = await tx.$queryRaw<(TimelineEntry & { atMicros: string })[]>`
    SELECT e.id, e.at, (extract(epoch FROM e.at) * 1000000)::bigint::text AS "atMicros", e.type, e.step_id AS "stepId",
           e.node_id AS "nodeId", e.attempt, e.lane, e.worker,
           CASE WHEN ${chainedByNode("e.data")}
                THEN jsonb_set(e.data, '{chained,stepId}', COALESCE(to_jsonb(
                       (SELECT s.id FROM steps s
                        WHERE s.run_id = e.run_id AND s.org_id = e.org_id AND s.node_id = e.data->'chained'->>'nodeId'
                          AND jsonb_typeof(e.data->'chained'->'iteration') = 'number'
                          AND s.iteration = (e.data->'chained'->>'iteration')::numeric)), 'null'::jsonb))
                ELSE e.data END AS data
    FROM run_events e WHERE e.org_id = ${orgId} AND e.run_id = ${runId} ORDER BY e.id`;
  return withChainedClaims(rows).map(({ atMicros: _, ...entry }) => entry);
}

/**
 * A migration renamed a step's node in this run (stepsRenameNode): the settle rows whose data.chained names a step at
 * that node by its node follow it, so the timeline still finds the step each claimed, and a node of the new version
 * that takes the old name is never mistaken for it. The rows' own node_id stays what it was when they were written.
 */
export function runEventsRenameChained(tx: Tx, orgId: string, runId: string, fromNodeId: string, toNodeId: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE run_events SET data = jsonb_set(data, '{chained,nodeId}', to_jsonb(${toNodeId}::text))
    WHERE org_id = ${orgId} AND run_id = ${runId} AND ${chainedByNode("data")} AND data->'chained'->>'nodeId' = ${fromNodeId}`;
}

const chainedClaim = z.object({ stepId: z.string().nullable(), nodeId: z.string(), iteration: z.number().int() });
/** The settle rows holdfast_step_settle writes data.chained into (a walk goes on after a step done or failed). */
const settleTypes = new Set(["step.succeeded", "step.failed", "step.skipped"]);

/**
 * A settle that claimed the run's next step for its worker (local dispatch) writes no row for that claim: its own row
 * says it in data.chained (holdfast_step_settle). Here that claim becomes the step's step.claimed entry, as a claimed
 * step's own row would read (attempt 1, the settle's worker and lane, its iteration), placed after the last row of
 * the settle's commit (the rows of one transaction share its time, to the microsecond: `atMicros`), where the walk's
 * rows put it, and before any row of the claimed step itself; `chained` leaves the settle's data. Only a settle's row
 * of a step, by a worker, is read so. Entries keep their row's id: a row and the claim it carries share one (tell
 * them apart by type).
 */
export function withChainedClaims<T extends TimelineEntry & { atMicros?: string }>(rows: T[]): T[] {
  const out: T[] = [];
  let pending: { claim: T; at: string } | null = null;
  const timeOf = (row: T) => row.atMicros ?? String(row.at.getTime() * 1000);
  for (const row of rows) {
    if (pending && (timeOf(row) !== pending.at || row.stepId === pending.claim.stepId)) {
      out.push(pending.claim);
      pending = null;
    }
    const parsed = row.data && settleTypes.has(row.type) && row.stepId && row.worker ? chainedClaim.safeParse(row.data.chained) : null;
    if (!parsed?.success) {
      out.push(row);
      continue;
    }
    const { chained: _, ...data } = row.data as Record<string, unknown>;
    out.push({ ...row, data: Object.keys(data).length ? data : null });
    const c = parsed.data;
    pending = {
      at: timeOf(row),
      claim: { ...row, type: "step.claimed", stepId: c.stepId, nodeId: c.nodeId, attempt: 1, data: { iteration: c.iteration } },
    };
  }
  if (pending) out.push(pending.claim);
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
