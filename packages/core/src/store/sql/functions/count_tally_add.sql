-- One journey count move of n runs (organisation, version, node, from, to) that names no run: while the transaction
-- collects (holdfast_count_tally_start, count_tally_start.sql, which says how), kept in the chunk being filled, a new
-- chunk past 4 kB, for the batch's flush (one count_tallies row per move); else n count_changes rows now, one a run, as
-- a release before count_tallies writes and folds them (a previous release's sweeper and web know only count_changes,
-- and only this release's batches collect). Called by holdfast_count_change (one change) and by the steps' statement
-- triggers (a statement's changes summed: count_steps_inserted.sql, count_steps_updated.sql).
-- History: new in 20261215100000_count_steps_as_sets (issue 47); the chunks were holdfast_count_change's.
CREATE OR REPLACE FUNCTION holdfast_count_tally_add(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text, p_n integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  chunk text := current_setting('holdfast.count_tally', true);
  kept text;
BEGIN
  IF chunk IS NULL OR chunk = '' THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT p_org_id, p_version_id, NULL, p_node_id, p_from, p_to FROM generate_series(1, p_n);
    RETURN;
  END IF;
  kept := current_setting('holdfast.count_tally_' || chunk);
  IF octet_length(kept) >= 4096 THEN
    chunk := (chunk::integer + 1)::text;
    kept := '';
    PERFORM set_config('holdfast.count_tally', chunk, true);
  END IF;
  PERFORM set_config('holdfast.count_tally_' || chunk, kept || ',' || json_build_array(p_org_id, p_version_id, p_node_id, p_from, p_to, p_n)::text, true);
END;
$function$;
