import type { Tx } from "@holdfast/db";

/** The sweeper's statements on runs: stalled and expired runs woken, old timelines marked removed. */

export interface StalledRun {
  orgId: string;
  runId: string;
}

/**
 * Sweeper: running runs with no way forward right now: no open step (ready, running, waiting or parked; or a cancel
 * waiting on no step in flight), no unsent outbox row, and no progress for `staleSeconds`. Typically a settled step
 * whose run.wake was lost, or a start whose wake-up was dropped. They get a fresh run.wake (at most once per
 * `staleSeconds`, by swept_at). A parked run is not stalled: it waits for a person, and it gains no rows. Progress is
 * read from the steps (each settle writes its step's updated_at); the run's own updated_at moves only when its state
 * does, so it only narrows the candidates.
 */
export function runsFindStalled(tx: Tx, staleSeconds: number, limit: number): Promise<StalledRun[]> {
  return tx.$queryRaw<StalledRun[]>`
    WITH stalled AS (
      SELECT r.id FROM runs r
      WHERE r.status = 'running'
        -- A held run is quiet on purpose: its resume wakes it.
        AND r.held_at IS NULL
        AND r.updated_at < now() - make_interval(secs => ${staleSeconds})
        AND (r.swept_at IS NULL OR r.swept_at < now() - make_interval(secs => ${staleSeconds}))
        AND (
          NOT EXISTS (
            SELECT 1 FROM steps s WHERE s.run_id = r.id
              -- A parked step waits for a person (reconnect, review, resume), whose action wakes the run: it is
              -- not lost, and re-waking it every interval only grew its timeline.
              AND (s.status IN ('ready', 'running', 'waiting', 'parked') OR s.updated_at >= now() - make_interval(secs => ${staleSeconds})))
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

/**
 * Finished runs whose timeline is older than the retention and still there, oldest first (the partial index
 * runs_timeline_retention_idx holds only these). Locked so a retry reopening one waits for the batch; SKIP LOCKED:
 * a run someone is acting on is left for the next pass. A running run never matches.
 */
export function runsTakeTimelineExpired(tx: Tx, retentionDays: number, limit: number): Promise<{ id: string; orgId: string }[]> {
  return tx.$queryRaw<{ id: string; orgId: string }[]>`
    SELECT id, org_id AS "orgId" FROM runs
    WHERE status IN ('completed', 'failed', 'cancelled', 'converted') AND (timeline_removed_at IS NULL OR timeline_removed_at < finished_at)
      AND finished_at < now() - make_interval(days => ${retentionDays}::int)
    ORDER BY finished_at LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}

/** Of these runs (locked by the caller), those with no timeline row left are marked removed, now. */
export function runsMarkTimelineRemovedIfEmpty(tx: Tx, runIds: string[]): Promise<{ id: string; orgId: string }[]> {
  return tx.$queryRaw<{ id: string; orgId: string }[]>`
    UPDATE runs r SET timeline_removed_at = now()
    WHERE r.id = ANY(${runIds}::text[]) AND NOT EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.id)
    RETURNING r.id, r.org_id AS "orgId"`;
}
