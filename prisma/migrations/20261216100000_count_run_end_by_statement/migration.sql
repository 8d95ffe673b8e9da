-- A run's end counted by the statement that ends it as a set (issue 47, the 09:00 spike's CPU a timer): the trigger
-- below stands aside while the transaction-local setting holdfast.count_run_end_by_statement is 'on'. The due sweep's
-- and the engine's firing (holdfast_timers_fire_walk) turns it on around its one statement, which ends every run it
-- walks to its end as 'completed' and counts those ends with the steps it moves, summed (count_tallies); the trigger
-- made one PL/pgSQL call and one count_changes INSERT a run, each run's own row. Every other
-- writer of a run's status, and every writer of a previous release (which never sets the setting), is counted by the
-- trigger as before. packages/core/test/timers-fire-walk.test.ts compares a set's counts with those of the same runs
-- walked one by one.
-- contract: runs_count_status
SET LOCAL lock_timeout = '10s';

CREATE OR REPLACE TRIGGER "runs_count_status" AFTER UPDATE OF "status" ON "runs" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
        AND current_setting('holdfast.count_run_end_by_statement', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION holdfast_count_run();
