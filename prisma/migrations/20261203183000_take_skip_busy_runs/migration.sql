-- holdfast_steps_take_ready takes a sixth argument (issue 19): a settle batch's take must not wait for a run's lock
-- while it holds the run locks of its own settles (two batches, each waiting for a run the other settled, would wait
-- on each other until the deadlock timeout). A function's arguments cannot change in place: the five-argument form is
-- dropped here and the live body (packages/core/src/sql/functions/steps_take_ready.sql) is made after the migrations.
DROP FUNCTION IF EXISTS holdfast_steps_take_ready(text, integer, text, double precision, text[]);
