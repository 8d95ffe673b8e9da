-- Journey counts' changes of a step (its run moving between buckets at its node: holdfast_count_step,
-- holdfast_count_step_node, holdfast_count_run_version's steps) name no run (issue 47, WAL a step): the fold needs a
-- change's run only for a split's edge and a run's outcome (which split paths it passed), and those rows keep it. Two
-- of a chained step's three changes are a step's, so a step writes about 75 bytes fewer. The functions (store/sql/functions/count_step.sql and the others)
-- write NULL from this release; a previous release's trigger bodies are replaced in the same deploy and wrote the run.
SET LOCAL lock_timeout = '10s';

ALTER TABLE count_changes ALTER COLUMN run_id DROP NOT NULL;
