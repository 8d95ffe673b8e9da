import { type Db, Prisma, type Tx } from "@holdfast/db";

/**
 * Steps held by a sending rule (issue 44): ready, due later, and their latest step.deferred row carries a `hold`.
 * The hold itself is on the timeline (written with the deferral, run/steps/runner.ts); the step's available_at is the
 * instant it is taken again, by its delayed wake-up or, if that is lost, by the sweeper (steps-sweep.ts).
 */

export interface HeldStep {
  stepId: string;
  nodeId: string;
  lane: string;
  availableAt: Date;
  /** The hold as the runner wrote it (base/outcome/outcome.ts SendHold). */
  hold: { rule: "quiet_hours" | "frequency_cap"; until: string; zone: string | null; zoneSource: string | null; words: string };
}

function heldRows(orgId: string, runId: string, stepId: string | null, lock: boolean): Prisma.Sql {
  return Prisma.sql`
    SELECT s.id AS "stepId", s.node_id AS "nodeId", s.lane, s.available_at AS "availableAt", d.data->'hold' AS hold
    FROM steps s
    CROSS JOIN LATERAL (
      SELECT e.data FROM run_events e
      WHERE e.run_id = s.run_id AND e.step_id = s.id AND e.type = 'step.deferred'
      ORDER BY e.id DESC LIMIT 1
    ) d
    WHERE s.org_id = ${orgId} AND s.run_id = ${runId} AND (${stepId}::text IS NULL OR s.id = ${stepId}::text)
      AND s.status = 'ready' AND s.available_at > now() AND d.data ? 'hold'
    ORDER BY s.created_at ${lock ? Prisma.sql`FOR UPDATE OF s` : Prisma.empty}`;
}

/** The run's held steps, oldest first. */
export function stepsHeldOfRun(db: Db | Tx, orgId: string, runId: string): Promise<HeldStep[]> {
  return db.$queryRaw<HeldStep[]>(heldRows(orgId, runId, null, false));
}

/** One held step, locked (a second click waits for the first, then finds it no longer held). */
export async function stepsHeldLock(tx: Tx, orgId: string, runId: string, stepId: string): Promise<HeldStep | null> {
  const rows = await tx.$queryRaw<HeldStep[]>(heldRows(orgId, runId, stepId, true));
  return rows[0] ?? null;
}

/** The held step is due now (a test run skipped its hold): its wake-up is written by the caller in this transaction. */
export async function stepsReleaseHeld(tx: Tx, orgId: string, stepId: string): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE steps SET available_at = now(), updated_at = now(), woken_at = now()
    WHERE org_id = ${orgId} AND id = ${stepId} AND status = 'ready' AND available_at > now()`;
  return n === 1;
}
