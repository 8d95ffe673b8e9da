import type { Tx } from "@holdfast/db";
import { type DuePick, dueFairlyPick, type FiredTimer, type SweepBatch } from "./timers";

/** A timer fired by the set path, with what became of its run there. */
export interface FiredAndWalked extends FiredTimer {
  /** The run's version and the wait's node: the key of the walk's plan (null when the step is gone). */
  versionId: string | null;
  nodeId: string | null;
  /** The plan was applied in the statement: the run goes on ('running') or ended ('completed'); null: walk it. */
  walked: "running" | "completed" | null;
}

/**
 * Fires these timers (each if due by the database clock, unfired, and at its wake number when `wakes` is given) and
 * moves on, in the same statement, every run whose walk `plans` already holds (holdfast_timers_fire_walk, the
 * contract of `plans` there). The rest come back with `walked` null, for the caller to walk in this transaction.
 */
export function timersFireWalk(tx: Tx, ids: string[], wakes: number[] | null, by: string, plans: string): Promise<FiredAndWalked[]> {
  return tx.$queryRaw<FiredAndWalked[]>`
    SELECT "timerId", wake, "orgId", "runId", "stepId", "latenessMs", "versionId", "nodeId", walked
    FROM holdfast_timers_fire_walk(${ids}::text[], ${wakes}::int[], ${by}, ${plans}::jsonb, true)`;
}

/**
 * The due sweep's batch in one statement: its fair pick (`dueFairlyPick`, locked SKIP LOCKED), fired and moved on as
 * `timersFireWalk` does, and each organisation served stamped (skipping one another batch is stamping, as
 * `timersServed`). Only what the caller still needs comes back: the fired timers whose runs it walks itself (`walked`
 * null) and the count and highest lateness per organisation. One round trip a batch, where a pick, a firing and a
 * stamp took three, and the runs moved on here (every one, in the 09:00 spike) are not read into the sweeper.
 */
export async function timersSweepFireWalk(
  tx: Tx,
  pick: DuePick,
  by: string,
  plans: string,
): Promise<{ rest: FiredAndWalked[]; fired: SweepBatch["fired"] }> {
  const rows = await tx.$queryRaw<{ rest: FiredAndWalked[] | null; fired: SweepBatch["fired"] | null }[]>`
    WITH f AS MATERIALIZED (
      SELECT "timerId", wake, "orgId", "runId", "stepId", "latenessMs", "versionId", "nodeId", walked
      FROM holdfast_timers_fire_walk(${dueFairlyPick(pick.orgs, pick.perOrg, pick.total)}, NULL, ${by}, ${plans}::jsonb, true)
    ), o AS MATERIALIZED (
      SELECT "orgId", count(*)::int AS count, max("latenessMs") AS "maxLatenessMs" FROM f GROUP BY "orgId"
    ), served AS (
      UPDATE organisations SET last_timer_served_at = now()
      WHERE id IN (SELECT id FROM organisations WHERE id IN (SELECT "orgId" FROM o) FOR NO KEY UPDATE SKIP LOCKED)
    )
    SELECT (SELECT jsonb_agg(to_jsonb(f) ORDER BY f."runId", f."timerId") FROM f WHERE f.walked IS NULL) AS rest,
           (SELECT jsonb_agg(to_jsonb(o) ORDER BY o."orgId") FROM o) AS fired`;
  return { rest: rows[0]?.rest ?? [], fired: rows[0]?.fired ?? [] };
}
