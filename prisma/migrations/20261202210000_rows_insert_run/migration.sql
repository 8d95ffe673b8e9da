-- holdfast_rows_insert takes the run its caller holds (p_org_id, p_run_id) and refuses a row that names another
-- (HF005): steps, the timeline and the outbox keep no foreign key to their run (20261202110000_append_only_keys,
-- 20261202130000_steps_run_key), so the one function that writes a walk's rows is where each is kept to that run. The
-- new signature and body live in packages/core/src/sql/functions/rows_insert.sql, and its callers' in run_start.sql
-- and step_settle.sql, all applied by `holdfast migrate` after the migrations; the old signature goes here. Between
-- this migration's commit and the function files' (the same `migrate`, a moment later), a start or settle of a process
-- still running fails and is retried (a settle's lease lapses and the sweeper hands the step on): migrate with the
-- lane workers stopped or at a quiet moment (docs/operations.md, "Migrations").
DROP FUNCTION IF EXISTS holdfast_rows_insert(jsonb);
