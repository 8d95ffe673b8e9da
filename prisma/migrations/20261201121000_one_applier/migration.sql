-- One applier (issue 18, item 1): what happens when a step is scheduled is written once, in TypeScript
-- (packages/core/src/apply/rows.ts). The start's and the settle's one statement no longer take the walk's plan and
-- schedule its steps in SQL: they take the rows the applier prepared and insert them as given (holdfast_rows_insert).
-- Their new signatures and bodies live in their files (packages/core/src/sql/functions/run_start.sql,
-- step_settle.sql, rows_insert.sql), applied by `holdfast migrate` after the migrations; the old signatures go here.
DROP FUNCTION holdfast_run_start(text, text, text, text, jsonb, jsonb, jsonb, text, text);
DROP FUNCTION holdfast_step_settle(text, integer, text, text, jsonb, jsonb, double precision, text, jsonb, bigint, jsonb, text, double precision, jsonb, text[]);
