import type { Db, Tx } from "@holdfast/db";
import type { NewTimer } from "./timers";

/** The timers not fired yet: read, locked and moved to another instant (a migration, a contact's zone, a test run). */

export interface PendingTimer extends Omit<NewTimer, "stepId"> {
  id: string;
  wake: number;
}

export function timersPending(tx: Tx, filter: { orgId?: string; runId?: string }, limit: number, afterId = ""): Promise<PendingTimer[]> {
  return tx.$queryRaw<PendingTimer[]>`
    SELECT id, org_id AS "orgId", run_id AS "runId", rule, zone, spread_seconds AS "spreadSeconds",
           spread_offset_seconds AS "spreadOffsetSeconds", anchor_at AS "anchorAt", due_at AS "dueAt", wake
    FROM timers
    WHERE fired_at IS NULL AND id > ${afterId}
      AND (${filter.orgId ?? null}::text IS NULL OR org_id = ${filter.orgId ?? null}::text)
      AND (${filter.runId ?? null}::text IS NULL OR run_id = ${filter.runId ?? null}::text)
    ORDER BY id LIMIT ${limit}`;
}

/**
 * The pending timers of a contact's running runs whose zone follows the contact (not a wait's own fixed zone), locked
 * for a recompute in the caller's transaction.
 */
export function timersPendingOfContact(tx: Tx, orgId: string, contactId: string): Promise<PendingTimer[]> {
  return tx.$queryRaw<PendingTimer[]>`
    SELECT t.id, t.org_id AS "orgId", t.run_id AS "runId", t.rule, t.zone, t.zone_source AS "zoneSource", t.spread_seconds AS "spreadSeconds",
           t.spread_offset_seconds AS "spreadOffsetSeconds", t.anchor_at AS "anchorAt", t.due_at AS "dueAt", t.wake
    FROM timers t JOIN runs r ON r.org_id = t.org_id AND r.id = t.run_id
    WHERE t.org_id = ${orgId} AND r.contact_id = ${contactId} AND r.status = 'running' AND t.fired_at IS NULL
      AND t.zone_source IS DISTINCT FROM 'node'
    ORDER BY t.id
    FOR UPDATE OF t`;
}

/** The unfired timers of a run's steps, by step: when each would fire, and in which zone (a test run's page). */
export function timersPendingOfRun(db: Db | Tx, orgId: string, runId: string): Promise<{ stepId: string; dueAt: Date; zone: string; zoneSource: string | null }[]> {
  return db.$queryRaw<{ stepId: string; dueAt: Date; zone: string; zoneSource: string | null }[]>`
    SELECT step_id AS "stepId", due_at AS "dueAt", zone, zone_source AS "zoneSource" FROM timers
    WHERE org_id = ${orgId} AND run_id = ${runId} AND fired_at IS NULL ORDER BY due_at`;
}

/** The unfired timer of one step (a wait's, a reply wait's deadline, an approval's deadline), locked; none: fired or gone. */
export async function timersPendingOfStep(tx: Tx, orgId: string, stepId: string): Promise<PendingTimer | null> {
  const rows = await tx.$queryRaw<PendingTimer[]>`
    SELECT id, org_id AS "orgId", run_id AS "runId", rule, zone, zone_source AS "zoneSource", spread_seconds AS "spreadSeconds",
           spread_offset_seconds AS "spreadOffsetSeconds", anchor_at AS "anchorAt", due_at AS "dueAt", wake
    FROM timers WHERE org_id = ${orgId} AND step_id = ${stepId} AND fired_at IS NULL
    ORDER BY id LIMIT 1
    FOR UPDATE`;
  return rows[0] ?? null;
}

/** Moves a pending timer to a new instant (and zone): a new wake number, a new fast-path job, a timeline entry. */
export async function timersReschedule(
  tx: Tx,
  t: PendingTimer,
  zone: string,
  dueAt: Date,
  reason: string,
  rule: unknown = t.rule,
): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH moved AS (
      UPDATE timers SET due_at = ${dueAt}::timestamptz, zone = ${zone}, rule = ${JSON.stringify(rule)}::jsonb,
                        wake = wake + 1, updated_at = now()
      WHERE id = ${t.id} AND fired_at IS NULL AND wake = ${t.wake}::int
      RETURNING id, org_id, run_id, step_id, wake, due_at
    ), superseded AS (
      -- The old wake-up is void: mark it sent so it neither fires nor holds back the sweeper's checks of this run.
      UPDATE outbox o SET sent_at = now() FROM moved m
      WHERE o.run_id = m.run_id AND o.topic = 'timer.due' AND o.sent_at IS NULL AND o.payload->>'timerId' = m.id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'timer.due',
             jsonb_build_object('orgId', org_id, 'runId', run_id, 'timerId', id, 'wake', wake, 'dueAt', due_at)
      FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, type, worker, data)
      SELECT org_id, run_id, step_id, 'timer.recomputed', 'holdfast',
             jsonb_build_object('timerId', id, 'reason', ${reason}::text, 'oldDueAt', ${t.dueAt}::timestamptz,
                                'newDueAt', due_at, 'oldZone', ${t.zone}::text, 'zone', ${zone}::text, 'wake', wake,
                                'oldRule', ${JSON.stringify(t.rule)}::jsonb, 'rule', ${JSON.stringify(rule)}::jsonb)
      FROM moved
    )
    SELECT id FROM moved`;
  return rows.length > 0;
}

/**
 * Locks a run's unfired timers (a migration, under its run's lock, before it reads the run's steps). Every firing
 * updates its timer before its step (the timer set, a reply's signal), and the timer set does not wait for a run
 * another transaction holds: without this lock, a wait could settle beside the migration and be counted on the
 * version the migration is moving its run off. With it, the firing waits and sees the run as the migration left it.
 */
export async function timersLockUnfiredOfRun(tx: Tx, orgId: string, runId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM timers WHERE org_id = ${orgId} AND run_id = ${runId} AND fired_at IS NULL ORDER BY id FOR UPDATE`;
}

/** The ids of a step's timers that have not fired. */
export function timersUnfiredForStep(tx: Tx, stepId: string): Promise<{ id: string }[]> {
  return tx.$queryRaw<{ id: string }[]>`SELECT id FROM timers WHERE step_id = ${stepId} AND fired_at IS NULL`;
}
