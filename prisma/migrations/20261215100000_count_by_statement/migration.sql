-- The journey counts' step changes made by the statements that write steps as sets (issue 47, CPU a step): the
-- triggers below stand aside while the transaction-local setting holdfast.count_by_statement is 'on'. The set
-- writers (holdfast_step_settle_set, holdfast_timers_fire_walk) turn it on around their one statement and count the
-- steps they write in that statement, summed, from rows they already hold (the run's version and test flag); the
-- triggers made one PL/pgSQL call a step, each reading its run again. Every other writer of steps, and every
-- writer of a previous release (which never sets the setting), is counted by the triggers as before.
-- packages/core/test/settle-batch.test.ts and timers-fire-walk.test.ts compare a set's counts with those of the same
-- steps written one by one.
-- contract: steps_count_insert
-- contract: steps_count_status
SET LOCAL lock_timeout = '10s';

CREATE OR REPLACE TRIGGER "steps_count_insert" AFTER INSERT ON "steps" FOR EACH ROW
  WHEN (current_setting('holdfast.count_by_statement', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION holdfast_count_step();

CREATE OR REPLACE TRIGGER "steps_count_status" AFTER UPDATE OF "status" ON "steps" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
        AND NOT (OLD.status IN ('ready', 'running', 'waiting') AND NEW.status IN ('ready', 'running', 'waiting'))
        AND current_setting('holdfast.count_by_statement', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION holdfast_count_step();
