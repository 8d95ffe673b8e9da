-- One index fewer on every run start and end (issue 47, the 09:00 spike's CPU a timer and WAL a step): runs_status_idx
-- held every run by status, so a run's insert and its end (a run's end changes its status: never a HOT update) each
-- wrote an entry there. Nothing reads it any more: a look-up of running runs is served by the partial indexes on
-- status = 'running' (runs_running_idx, runs_running_expires_idx, runs_running_version_idx,
-- runs_automation_running_idx), finished runs by runs_timeline_retention_idx, and the counts by status and test (health,
-- /metrics: runsCountByStatus in store/sql/runs-view.ts) read every row's test flag, which the index never held.
--
-- Dropping an index locks its table (ACCESS EXCLUSIVE) for a moment; a lock this migration waits for longer than
-- lock_timeout fails it (try again at a quiet moment) instead of queueing every writer behind it. On a large database,
-- run this first, outside a transaction (docs/operations.md, "Migrations"):
--   DROP INDEX CONCURRENTLY IF EXISTS "runs_status_idx";
-- speed only: runs_status_idx
SET LOCAL lock_timeout = '10s';
DROP INDEX IF EXISTS "runs_status_idx";
