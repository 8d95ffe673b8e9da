-- One journey count change that names no run (a step's, an edge that leaves no split): one count_changes row, or,
-- while the transaction collects (holdfast_count_tally_start, count_tally_start.sql, which says how), kept in the
-- chunk being filled, a new chunk past 4 kB.
-- History: new in 20261213100000_count_tallies (issue 47).
CREATE OR REPLACE FUNCTION holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  chunk text := current_setting('holdfast.count_tally', true);
  kept text;
BEGIN
  IF chunk IS NULL OR chunk = '' THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (p_org_id, p_version_id, NULL, p_node_id, p_from, p_to);
    RETURN;
  END IF;
  kept := current_setting('holdfast.count_tally_' || chunk);
  IF octet_length(kept) >= 4096 THEN
    chunk := (chunk::integer + 1)::text;
    kept := '';
    PERFORM set_config('holdfast.count_tally', chunk, true);
  END IF;
  PERFORM set_config('holdfast.count_tally_' || chunk, kept || ',' || json_build_array(p_org_id, p_version_id, p_node_id, p_from, p_to)::text, true);
END;
$function$;
