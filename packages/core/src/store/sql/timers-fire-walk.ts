import type { Tx } from "@holdfast/db";
import { dueFairlyPick, type FiredTimer } from "./timers";

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
    FROM holdfast_timers_fire_walk(${ids}::text[], ${wakes}::int[], ${by}, ${plans}::jsonb)`;
}

/** The fair due sweep's pick: the ids of the due timers it takes (locked in this transaction, SKIP LOCKED). */
export async function timersPickDueFairly(tx: Tx, orgLimit: number, perOrg: number, total: number): Promise<string[]> {
  const rows = await tx.$queryRaw<{ ids: string[] }[]>`SELECT ${dueFairlyPick(orgLimit, perOrg, total)} AS ids`;
  return rows[0]?.ids ?? [];
}
