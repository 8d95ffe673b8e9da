import type { Tx } from "@holdfast/db";
import type { InlinePlan } from "../walk/plan";

export interface RunRow {
  id: string;
  orgId: string;
  automationId: string;
  versionId: string;
  status: "running" | "completed" | "failed" | "cancelled";
  input: unknown;
  cancelRequested: boolean;
  /** Budgets (set at start): steps it may execute (null: none set), and whether its age limit has passed. */
  maxSteps?: number | null;
  expired?: boolean;
}

/** One logical run per (org_id, start_key): the unique key refuses the second start, whoever races. */
export async function runsInsertIfNew(
  tx: Tx,
  run: { orgId: string; automationId: string; versionId: string; startKey: string; input: unknown; contactId?: string | null },
): Promise<{ id: string; inserted: boolean }> {
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO runs (org_id, automation_id, version_id, start_key, input, contact_id)
    VALUES (${run.orgId}, ${run.automationId}, ${run.versionId}, ${run.startKey}, ${JSON.stringify(run.input)}::jsonb, ${run.contactId ?? null})
    ON CONFLICT (org_id, start_key) DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { id: inserted[0].id, inserted: true };
  // The conflicting row is committed (ON CONFLICT waited for it), so a fresh statement sees it.
  const existing = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM runs WHERE org_id = ${run.orgId} AND start_key = ${run.startKey}`;
  if (!existing[0]) throw new Error(`start key ${run.startKey} conflicted but no run holds it`);
  return { id: existing[0].id, inserted: false };
}

/**
 * One statement starts a run with its first walk (holdfast_run_start): the run row, run.started, the plan's events,
 * first steps and their step.ready outbox rows. A repeat of the start key records run.duplicate_start instead.
 */
export async function runsStartWithPlan(
  db: Tx,
  run: {
    orgId: string;
    automationId: string;
    versionId: string;
    startKey: string;
    input: unknown;
    eventData: Record<string, unknown>;
    plan: InlinePlan;
    contact: { email: string; timeZone: string | null } | null;
  },
): Promise<{ runId: string; inserted: boolean }> {
  const rows = await db.$queryRaw<{ r: { runId: string; inserted: boolean } }[]>`
    SELECT holdfast_run_start(${run.orgId}, ${run.automationId}, ${run.versionId}, ${run.startKey},
      ${JSON.stringify(run.input)}::jsonb, ${JSON.stringify(run.eventData)}::jsonb, ${JSON.stringify(run.plan)}::jsonb,
      'start', holdfast_contact_resolve(${run.orgId}, ${run.contact?.email ?? null}::text, ${run.contact?.timeZone ?? null}::text)) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error(`start of ${run.startKey} returned nothing`);
  return r;
}

/** A run started from the editor's Test run: marked in the same transaction as its start. */
export async function runsMarkTest(tx: Tx, orgId: string, runId: string): Promise<void> {
  const n = await tx.$executeRaw`UPDATE runs SET test = true WHERE org_id = ${orgId} AND id = ${runId}`;
  if (n !== 1) throw new Error(`test run ${runId} not found to mark`);
}

/** The engine's lock: one walk of a run at a time, across every engine process. */
export async function runsLockForWalk(tx: Tx, orgId: string, runId: string): Promise<RunRow | undefined> {
  const rows = await tx.$queryRaw<RunRow[]>`
    SELECT id, org_id AS "orgId", automation_id AS "automationId", version_id AS "versionId", status, input,
           cancel_requested_at IS NOT NULL AS "cancelRequested", max_steps AS "maxSteps",
           COALESCE(expires_at <= now(), false) AS expired
    FROM runs WHERE org_id = ${orgId} AND id = ${runId}
    FOR UPDATE`;
  return rows[0];
}

export function runsTouch(tx: Tx, runId: string): Promise<number> {
  return tx.$executeRaw`UPDATE runs SET updated_at = now(), seq = seq + 1 WHERE id = ${runId}`;
}

export function runsFinish(
  tx: Tx,
  runId: string,
  status: "completed" | "failed" | "cancelled",
  error: Record<string, unknown> | null,
): Promise<number> {
  return tx.$executeRaw`
    UPDATE runs SET status = ${status}, error = ${error ? JSON.stringify(error) : null}::jsonb,
                    finished_at = now(), updated_at = now(), seq = seq + 1
    WHERE id = ${runId} AND status = 'running'`;
}

export function runsRequestCancel(tx: Tx, orgId: string, runId: string, reason: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE runs SET cancel_requested_at = now(), cancel_reason = ${reason}, updated_at = now(), seq = seq + 1
    WHERE org_id = ${orgId} AND id = ${runId} AND status = 'running' AND cancel_requested_at IS NULL`;
}

export interface StalledRun {
  orgId: string;
  runId: string;
}

/**
 * Sweeper: running runs with no way forward right now: no open step (or a cancel waiting on no step in flight), no
 * unsent outbox row, and no progress for `staleSeconds`. Typically a settled step whose run.wake was lost, or a start whose wake-up was
 * dropped. They get a fresh run.wake (at most once per `staleSeconds`, by swept_at).
 */
export function runsFindStalled(tx: Tx, staleSeconds: number, limit: number): Promise<StalledRun[]> {
  return tx.$queryRaw<StalledRun[]>`
    WITH stalled AS (
      SELECT r.id FROM runs r
      WHERE r.status = 'running'
        AND r.updated_at < now() - make_interval(secs => ${staleSeconds})
        AND (r.swept_at IS NULL OR r.swept_at < now() - make_interval(secs => ${staleSeconds}))
        AND (
          NOT EXISTS (
            SELECT 1 FROM steps s WHERE s.run_id = r.id
              AND (s.status IN ('ready', 'running', 'waiting') OR s.updated_at >= now() - make_interval(secs => ${staleSeconds})))
          -- A cancel waits only for a step in flight; once none holds a live lease the engine must finish it.
          OR (r.cancel_requested_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'running' AND s.lease_until >= now())))
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.id AND o.sent_at IS NULL)
      ORDER BY r.updated_at
      LIMIT ${limit}
      FOR UPDATE OF r SKIP LOCKED
    ), moved AS (
      UPDATE runs r SET swept_at = now() FROM stalled WHERE r.id = stalled.id RETURNING r.id, r.org_id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', id, 'reason', 'sweep') FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, type, worker) SELECT org_id, id, 'run.rewoken', 'sweeper' FROM moved
    )
    SELECT org_id AS "orgId", id AS "runId" FROM moved`;
}

/**
 * Sweeper: running runs past their age budget (`expires_at`), however quiet (a long wait): each gets a run.wake so
 * the engine's walk stops it with the reason (at most once per `staleSeconds`, by swept_at).
 */
export function runsWakeExpired(tx: Tx, staleSeconds: number, limit: number): Promise<StalledRun[]> {
  return tx.$queryRaw<StalledRun[]>`
    WITH expired AS (
      SELECT r.id FROM runs r
      WHERE r.status = 'running' AND r.expires_at <= now()
        AND (r.swept_at IS NULL OR r.swept_at < now() - make_interval(secs => ${staleSeconds}))
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.id AND o.sent_at IS NULL AND o.topic = 'run.wake')
      ORDER BY r.expires_at
      LIMIT ${limit}
      FOR UPDATE OF r SKIP LOCKED
    ), moved AS (
      UPDATE runs r SET swept_at = now() FROM expired WHERE r.id = expired.id RETURNING r.id, r.org_id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', id, 'reason', 'sweep') FROM moved
    )
    SELECT org_id AS "orgId", id AS "runId" FROM moved`;
}

/** The run's contact: one row per (org, lower-cased email), created on first sight (holdfast_contact_resolve). */
export async function contactsResolve(tx: Tx, orgId: string, email: string, timeZone: string | null): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string | null }[]>`SELECT holdfast_contact_resolve(${orgId}, ${email}, ${timeZone}::text) AS id`;
  return rows[0]?.id ?? null;
}
