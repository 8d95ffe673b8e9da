-- Fewer index writes on the hot path (issue 19): every settle rewrote the run row and the step row, and neither
-- update was HOT (heap-only: no index entry written), so each step wrote about thirty index entries.
--
-- runs: a step's settle and a walk bump only seq (holdfast_step_settle, sql/runs.ts runsTouch); updated_at now says
-- when the run's own state last changed (start, finish, hold, cancel, retry). No index holds seq, so those updates are
-- HOT when the page has room: fillfactor 80 keeps room for them. A run's progress through its steps is read from
-- its steps (each settle writes the step's updated_at), as the stalled-run scan already did.
ALTER TABLE "runs" SET (fillfactor = 80);
-- (status, updated_at) served no query: the stalled-run scan reads runs_running_idx (updated_at WHERE running).
DROP INDEX IF EXISTS "runs_status_updated_at_idx";

-- steps: the (run_id) index repeats the leading column of steps_run_id_node_id_iteration_key.
DROP INDEX IF EXISTS "steps_run_idx";
-- The status indexes hold open steps only (ready, running, waiting, parked: the ones the sweeper, the lane counts
-- and the checks look for by status). A step settled done or failed leaves them, so its settle writes no entry there.
-- They are small (open steps only) and built before the full ones go, so no query is left without one.
-- On a large existing database build them first without blocking writes (the migration then finds them):
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "steps_open_status_lease_until_idx" ON "steps" ("status", "lease_until")
--     WHERE status IN ('ready', 'running', 'waiting', 'parked');
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "steps_open_lane_status_available_at_idx" ON "steps" ("lane", "status", "available_at")
--     WHERE status IN ('ready', 'running', 'waiting', 'parked');
CREATE INDEX IF NOT EXISTS "steps_open_status_lease_until_idx" ON "steps" ("status", "lease_until")
  WHERE status IN ('ready', 'running', 'waiting', 'parked');
CREATE INDEX IF NOT EXISTS "steps_open_lane_status_available_at_idx" ON "steps" ("lane", "status", "available_at")
  WHERE status IN ('ready', 'running', 'waiting', 'parked');
DROP INDEX IF EXISTS "steps_status_lease_until_idx";
DROP INDEX IF EXISTS "steps_lane_status_available_at_idx";

-- run_events: the timeline is read and removed by run ((run_id, id): the run page, retention), never by id alone, so
-- (run_id, id) is the primary key and the (id) index goes: one index entry a timeline row instead of two.
-- On a large existing database build the new key first without blocking the timeline's writes (the migration then
-- finds it; the swap of the primary key below is then quick):
--   CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "run_events_run_id_id_key" ON "run_events" ("run_id", "id");
CREATE UNIQUE INDEX IF NOT EXISTS "run_events_run_id_id_key" ON "run_events" ("run_id", "id");
ALTER TABLE "run_events" DROP CONSTRAINT "run_events_pkey";
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_pkey" PRIMARY KEY USING INDEX "run_events_run_id_id_key";
DROP INDEX IF EXISTS "run_events_run_id_id_idx";

-- effects: the organisation is already held through the run (effects_run_id_fkey is (org_id, run_id) -> runs, and a
-- run's org_id -> organisations). The direct key locked the organisation's row FOR KEY SHARE in every effect claim:
-- many transactions at once on one row, a new MultiXact each time.
ALTER TABLE "effects" DROP CONSTRAINT IF EXISTS "effects_org_id_fkey";
