-- The condition of the trigger steps_count_status written out, with no function call in it (issue 47, CPU a step). It
-- said holdfast_count_bucket(OLD.status) IS DISTINCT FROM holdfast_count_bucket(NEW.status). PostgreSQL prepares a
-- trigger's WHEN condition again in every statement that fires it (here: every UPDATE that sets status), and a LANGUAGE
-- sql function in it is inlined there: its body parsed and planned twice per statement, in every claim and every settle
-- of a step. The condition below is the same test on the same rows: the buckets differ exactly when the status changes
-- and not between two of ready, running and waiting (the statuses holdfast_count_bucket counts as "now"; every other
-- status of steps_status_check is a bucket of its own). The trigger's function and what it counts do not change, so a
-- previous release's writes are counted as before. packages/core/test/count-trigger-condition.test.ts checks the two
-- conditions agree for every pair of statuses.
-- contract: steps_count_status
SET LOCAL lock_timeout = '10s';

CREATE OR REPLACE TRIGGER "steps_count_status" AFTER UPDATE OF "status" ON "steps" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
        AND NOT (OLD.status IN ('ready', 'running', 'waiting') AND NEW.status IN ('ready', 'running', 'waiting')))
  EXECUTE FUNCTION holdfast_count_step();
