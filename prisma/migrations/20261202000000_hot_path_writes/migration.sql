-- Fewer index writes on the hot path (issue 19): every settle rewrote the run row and the step row, and neither
-- update was HOT (heap-only: no index entry written), so each step wrote about thirty index entries.
--
-- This migration runs in one transaction: on a large existing database, run the CONCURRENTLY lines below first and
-- stop old sweepers (their timeline retention deletes by id alone, which no index serves after this) before it runs;
-- docs/operations.md, "Migrations". The new indexes are built before anything is dropped, and a lock this migration
-- waits for longer than lock_timeout fails it (try again at a quiet moment) instead of queueing every writer behind it.
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "runs_status_idx" ON "runs" ("status");
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "steps_open_status_lease_until_idx" ON "steps" ("status", "lease_until")
--     WHERE status IN ('ready', 'running', 'waiting', 'parked');
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "steps_open_lane_status_available_at_idx" ON "steps" ("lane", "status", "available_at")
--     WHERE status IN ('ready', 'running', 'waiting', 'parked');
--   CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "run_events_run_id_id_key" ON "run_events" ("run_id", "id");
SET LOCAL lock_timeout = '10s';

-- runs: a step's settle and a walk bump only seq (holdfast_step_settle, sql/runs.ts runsTouch); updated_at says when
-- the run's own row last changed otherwise (start, finish, hold, cancel, retry). No index holds seq, so those updates
-- are HOT when the page has room: fillfactor 80 keeps room on pages written from now on (pages already full stay so
-- until the table is rewritten). A run's progress is read from its steps (each settle writes the step's updated_at),
-- as the stalled-run scan already did. The counts by status (health, /metrics) read runs_status_idx: status changes
-- only when a run ends, which writes the run's indexes anyway.
ALTER TABLE "runs" SET (fillfactor = 80);
CREATE INDEX IF NOT EXISTS "runs_status_idx" ON "runs" ("status");

-- steps: the status indexes hold open steps only (ready, running, waiting, parked: the ones the sweeper, the lane
-- counts and the checks look for by status). A step settled done or failed leaves them, so its settle writes no entry
-- there.
CREATE INDEX IF NOT EXISTS "steps_open_status_lease_until_idx" ON "steps" ("status", "lease_until")
  WHERE status IN ('ready', 'running', 'waiting', 'parked');
CREATE INDEX IF NOT EXISTS "steps_open_lane_status_available_at_idx" ON "steps" ("lane", "status", "available_at")
  WHERE status IN ('ready', 'running', 'waiting', 'parked');

-- run_events: the timeline is read and removed by run ((run_id, id): the run page, retention), never by id alone, so
-- (run_id, id) becomes the primary key and the (id) index goes: one index entry a timeline row instead of two.
CREATE UNIQUE INDEX IF NOT EXISTS "run_events_run_id_id_key" ON "run_events" ("run_id", "id");

-- An index left invalid by a cancelled CREATE INDEX CONCURRENTLY has the name but serves no query: refuse to go on.
DO $$
DECLARE
  bad text;
BEGIN
  SELECT string_agg(c.relname, ', ') INTO bad FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE c.relname IN ('runs_status_idx', 'steps_open_status_lease_until_idx', 'steps_open_lane_status_available_at_idx',
                      'run_events_run_id_id_key')
    AND NOT i.indisvalid;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'index % is invalid (a CREATE INDEX CONCURRENTLY that did not finish): DROP INDEX it and build it again, then migrate', bad;
  END IF;
END $$;

-- Then the old ones go. runs (status, updated_at) held updated_at, which every settle used to write: runs_status_idx
-- above serves the counts by status (the stalled-run scan reads runs_running_idx, updated_at WHERE running).
DROP INDEX IF EXISTS "runs_status_updated_at_idx";
-- steps (run_id) repeats the leading column of steps_run_id_node_id_iteration_key.
DROP INDEX IF EXISTS "steps_run_idx";
DROP INDEX IF EXISTS "steps_status_lease_until_idx";
DROP INDEX IF EXISTS "steps_lane_status_available_at_idx";
ALTER TABLE "run_events" DROP CONSTRAINT "run_events_pkey";
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_pkey" PRIMARY KEY USING INDEX "run_events_run_id_id_key";
DROP INDEX IF EXISTS "run_events_run_id_id_idx";

-- effects: the organisation is already held through the run (effects_run_id_fkey is (org_id, run_id) -> runs, and a
-- run's org_id -> organisations). The direct key locked the organisation's row FOR KEY SHARE in every effect claim:
-- many transactions at once on one row, a new MultiXact each time.
ALTER TABLE "effects" DROP CONSTRAINT IF EXISTS "effects_org_id_fkey";
