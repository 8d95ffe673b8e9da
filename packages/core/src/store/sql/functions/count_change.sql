-- One journey count change that names no run (an edge that leaves no split, a step moved to another node): one
-- count_changes row, or, while the transaction collects, kept with the others (holdfast_count_tally_add).
-- History: new in 20261213100000_count_tallies (issue 47).
CREATE OR REPLACE FUNCTION holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM holdfast_count_tally_add(p_org_id, p_version_id, p_node_id, p_from, p_to, 1);
END;
$function$;
