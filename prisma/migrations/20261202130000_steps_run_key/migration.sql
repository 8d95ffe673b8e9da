-- The last foreign key checked on every step, kept by its writers instead (issue 19), as 20261202110000_append_only_keys
-- did for the timeline and the effect's step: steps -> runs. Each step row inserted ran a lookup of its run with a
-- FOR KEY SHARE lock, as a trigger after the statement, and the lock wrote a WAL record of its own on the run's row
-- (about one a step: the settle that inserts the next step has just updated that row, and the lock lands on its new
-- version). Every statement that inserts steps holds the run first, with the run's org_id: the start creates the run
-- in the same statement (holdfast_run_start), a settle locks or updates it before it inserts the next step
-- (holdfast_step_settle), the engine's walk locks it FOR UPDATE (sql/runs.ts runsLockForWalk) before the applier
-- writes. Runs are never deleted (finished runs' timelines are removed by the sweeper's retention; their steps stay),
-- so the key's ON DELETE CASCADE never ran; the application's roles now may not delete a run at all, so that stays
-- true (the schema's owner still can, by hand, and then deletes its steps too). Reading is unchanged: row-level
-- security scopes steps by their own org_id.
--
-- Dropping a foreign key locks both of its tables (ACCESS EXCLUSIVE: the key's triggers live on both), so this
-- migration stops every write and read of runs and steps for a moment. It takes both locks first, in the order the
-- engine's statements take them (the run, then its steps), so it queues behind the transactions in flight instead of
-- deadlocking with one of them halfway; run it with the lane workers stopped or at a quiet moment
-- (docs/operations.md, "Migrations").
SET LOCAL lock_timeout = '10s';
LOCK TABLE "runs", "steps" IN ACCESS EXCLUSIVE MODE;
ALTER TABLE "steps" DROP CONSTRAINT IF EXISTS "steps_run_fkey";
REVOKE DELETE ON "runs" FROM holdfast_web, holdfast_worker;
