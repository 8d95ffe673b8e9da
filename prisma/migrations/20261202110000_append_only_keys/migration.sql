-- Two foreign keys checked on every step, kept by their writers instead (issue 19). Each checked row ran a lookup of
-- the parent row with a FOR KEY SHARE lock, as a trigger after the statement: about 3 of the 5 such checks a step cost.
--   run_events -> runs: a timeline row is written only by the engine's statements, with the run and organisation of
--     the run or step row that statement has just locked or written (holdfast_step_settle, holdfast_step_claim,
--     holdfast_rows_insert from the applier, sql/run-events.ts). Runs are never deleted (finished runs' timelines are
--     removed by the sweeper's retention, by run), so the key's ON DELETE CASCADE never ran. Reading is unchanged:
--     row-level security scopes the timeline by its own org_id.
--   effects -> steps: the ledger's step_id is the step whose attempt first claimed the key, written by the claim in the
--     statement that holds that step (holdfast_effect_claim). The key to the run (effects_run_id_fkey) stays.
--
-- Dropping a foreign key locks both of its tables (ACCESS EXCLUSIVE: the key's triggers live on both), so this
-- migration stops every write and read of runs, steps, effects and the timeline for a moment. It takes all four
-- locks first, in the order the engine's statements take them (the run, then its steps, effects and timeline), so it
-- queues behind the transactions in flight instead of deadlocking with one of them halfway; run it with the lane
-- workers stopped or at a quiet moment (docs/operations.md, "Migrations").
SET LOCAL lock_timeout = '10s';
LOCK TABLE "runs", "steps", "effects", "run_events" IN ACCESS EXCLUSIVE MODE;
ALTER TABLE "run_events" DROP CONSTRAINT IF EXISTS "run_events_run_fkey";
ALTER TABLE "effects" DROP CONSTRAINT IF EXISTS "effects_step_fkey";
