-- One journey count move of n runs (organisation, version, node, from, to) that names no run: while the transaction
-- collects (holdfast_count_tally_start, count_tally_start.sql, which says how), kept in the chunk being filled, a new
-- chunk past 4 kB, for the batch's flush; else a count_tallies row now. Called by holdfast_count_change (one change,
-- while collecting) and by the steps' statement triggers (a statement's changes summed: count_steps_inserted.sql,
-- count_steps_updated.sql).
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
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    VALUES (p_org_id, p_version_id, p_node_id, p_from, p_to, p_n);
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
