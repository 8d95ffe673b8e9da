import type { Tx } from "@holdfast/db";

/** An automation's runs acted on together: held and released with its pause and resume, stopped all at once. */

/**
 * Pause with "hold running runs": the automation's running runs take no next step until resume. Each gets a
 * run.held timeline row. Runs being cancelled are left to finish their cancellation.
 */
export async function runsHoldForAutomation(tx: Tx, orgId: string, automationId: string, by: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH held AS (
      UPDATE runs SET held_at = now(), updated_at = now()
      WHERE org_id = ${orgId} AND automation_id = ${automationId} AND status = 'running'
        AND held_at IS NULL AND cancel_requested_at IS NULL
      RETURNING id, org_id
    ), event AS (
      INSERT INTO run_events (org_id, run_id, type, worker, data)
      SELECT org_id, id, 'run.held', ${by}, '{"reason":"the automation was paused with its running runs held"}'::jsonb FROM held
    )
    SELECT count(*)::int AS n FROM held`;
  return rows[0]?.n ?? 0;
}

/** Resume: the automation's held runs go on; each gets a run.wake (the engine walks it) and a run.released row. */
export async function runsReleaseForAutomation(tx: Tx, orgId: string, automationId: string, by: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH released AS (
      UPDATE runs SET held_at = NULL, updated_at = now(), seq = seq + 1
      WHERE org_id = ${orgId} AND automation_id = ${automationId} AND held_at IS NOT NULL
      RETURNING id, org_id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', id, 'reason', 'resumed') FROM released
    ), event AS (
      INSERT INTO run_events (org_id, run_id, type, worker) SELECT org_id, id, 'run.released', ${by} FROM released
    )
    SELECT count(*)::int AS n FROM released`;
  return rows[0]?.n ?? 0;
}

/** Running runs of an automation (of one version when given) that Stop all runs would cancel. */
export async function runsCountRunning(tx: Tx, orgId: string, automationId: string, version: number | null): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM runs r
    WHERE r.org_id = ${orgId} AND r.automation_id = ${automationId} AND r.status = 'running'
      AND (${version}::int IS NULL OR r.version_id = (
        SELECT id FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId} AND version = ${version}::int))`;
  return rows[0]?.n ?? 0;
}

/**
 * The next batch of running runs after `afterId` (id order), for Stop all runs: only runs started by `startedBy` (the
 * database clock when the stop began). Ids are time-ordered, so without it every run started while the stop works
 * would sort after the cursor and be stopped too, and a busy automation could keep the loop going.
 */
export function runsRunningBatch(
  tx: Tx,
  orgId: string,
  automationId: string,
  version: number | null,
  afterId: string,
  limit: number,
  startedBy: Date,
): Promise<{ id: string }[]> {
  return tx.$queryRaw<{ id: string }[]>`
    SELECT r.id FROM runs r
    WHERE r.org_id = ${orgId} AND r.automation_id = ${automationId} AND r.status = 'running' AND r.id > ${afterId}
      AND r.created_at <= ${startedBy}
      AND (${version}::int IS NULL OR r.version_id = (
        SELECT id FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId} AND version = ${version}::int))
    ORDER BY r.id LIMIT ${limit}`;
}
