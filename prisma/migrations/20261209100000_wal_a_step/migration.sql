-- Less WAL a step (issue 47), measured by record type and relation with pg_walinspect over a `pnpm bench` row
-- (docs/performance.md, "WAL a step"):
--
SET LOCAL lock_timeout = '10s';

-- steps and effects: a step's settle rewrites its step row and its effect row. Neither update can be HOT (the step's
-- status and lease, the effect's status and lease, are in partial indexes), but with room on the page the new
-- version is written beside the old one: on a full page PostgreSQL first logs a lock of the old version (a WAL record
-- of its own) and writes the new one on another page. fillfactor 85 keeps that room on pages written from now on
-- (pages already full stay so until the table is rewritten); a finished step's page keeps the room once its rows
-- are pruned, at the cost of about a sixth more heap for finished steps.
ALTER TABLE "steps" SET (fillfactor = 85);
ALTER TABLE "effects" SET (fillfactor = 85);

-- Last: the index drop holds count_changes exclusively (every settle waits) only from here to the commit.
-- count_changes (version_id): every journey count change wrote an entry there, about three a step, a tenth of a
-- step's WAL. The table is a queue: a change lives until the sweeper's next fold (a second or two), so the only reader
-- that looked changes up by version, the journey counts' read (store/sql/journey-counts.ts, pending changes of one
-- automation's versions), scans the few changes not folded yet instead. The fold takes whatever rows come first and
-- never used it. The previous release's processes read through it only for speed: dropping it breaks none of them.
-- A read while the fold is far behind (the sweeper stopped for a long time) scans the whole backlog.
-- speed only: count_changes_version_idx
DROP INDEX IF EXISTS "count_changes_version_idx";
