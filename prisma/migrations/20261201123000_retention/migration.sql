-- Timeline retention (issue 19, item 5): a finished run's run_events are removed after RUN_EVENTS_RETENTION_DAYS by
-- the sweeper's timeline-retention service (packages/core/src/sweeper/services/timeline-retention.ts); the run, its
-- steps and effects stay. timeline_removed_at says when, so the run page can tell why the timeline is short, and a run
-- retried after that (finished_at cleared, later set again) becomes a candidate again.
ALTER TABLE "runs" ADD COLUMN "timeline_removed_at" TIMESTAMPTZ(6);

-- The candidates only: finished runs whose timeline is still there. Small in the steady state (the runs finished
-- within the retention), so the service's ORDER BY finished_at LIMIT n never walks the millions already done. Its
-- columns never change while a run is running, so the hot path's updates of a run stay HOT-eligible.
-- On a large existing database build it first without blocking writes (the migration then finds it):
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "runs_timeline_retention_idx" ON "runs" ("finished_at")
--     WHERE status IN ('completed', 'failed', 'cancelled') AND (timeline_removed_at IS NULL OR timeline_removed_at < finished_at);
CREATE INDEX IF NOT EXISTS "runs_timeline_retention_idx" ON "runs" ("finished_at")
  WHERE status IN ('completed', 'failed', 'cancelled') AND (timeline_removed_at IS NULL OR timeline_removed_at < finished_at);
