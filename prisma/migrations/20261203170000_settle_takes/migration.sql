-- holdfast_step_settle_many takes a second argument (issue 19): a lane worker's settle batch also takes its lane's
-- due first steps for the slots the batch frees, in the same commit. A function's arguments cannot change in place:
-- the one-argument form is dropped here and the live body (packages/core/src/sql/functions/step_settle_many.sql) is
-- made after the migrations. A worker of the release before calls the old form during a deploy: its batch fails as a
-- whole and each settle goes alone (steps/settle-batch.ts), as after any failed batch.
DROP FUNCTION IF EXISTS holdfast_step_settle_many(jsonb);
