-- A settle batch as a previous release's lane workers call it (before 20261213100000_count_tallies): exactly
-- holdfast_step_settle_batch (step_settle_batch.sql) without a tally, so their steps' journey count changes are a
-- count_changes row each, which that release's sweeper folds. Drop it once release.json's previousRelease calls
-- holdfast_step_settle_batch.
-- History (prisma/migrations, never edited): 20261203170000_settle_takes; the body moved to step_settle_batch.sql in
-- 20261213100000_count_tallies. The three-argument form some development databases got before that is dropped here.
DROP FUNCTION IF EXISTS holdfast_step_settle_many(jsonb, jsonb, boolean);
CREATE OR REPLACE FUNCTION holdfast_step_settle_many(p_items jsonb, p_take jsonb)
 RETURNS jsonb
 LANGUAGE sql
AS $function$
  SELECT holdfast_step_settle_batch(p_items, p_take, false);
$function$;
