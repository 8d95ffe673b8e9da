-- Journey counts' step changes (holdfast_count_step, holdfast_count_step_node), written now or summed at the end of
-- the transaction's batch (20261213100000_count_tallies).
-- holdfast_count_tally_start(): from here to holdfast_count_tally_flush(), in this transaction, a step's change is
-- kept in the transaction-local setting holdfast.count_tally (a JSON list being built) instead of a row of its own.
-- A subtransaction rolled back (a stale settle in a batch) takes back what it added there, as it takes back its rows.
-- holdfast_count_tally_flush(): writes what was kept as count_tallies rows, one per organisation, version, node and
-- move with its number of runs, and ends the collecting. The caller that starts collecting must flush before it
-- returns: a change still kept at commit is lost.
-- holdfast_count_change(): one change of a step's run, collected when collecting, else one count_changes row.
-- History: new in 20261213100000_count_tallies (issue 47).
CREATE OR REPLACE FUNCTION holdfast_count_tally_start() RETURNS void LANGUAGE sql AS $$
  SELECT set_config('holdfast.count_tally', '[', true);
$$;

CREATE OR REPLACE FUNCTION holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  kept text := current_setting('holdfast.count_tally', true);
BEGIN
  IF left(kept, 1) = '[' THEN
    PERFORM set_config('holdfast.count_tally',
                       kept || CASE WHEN kept = '[' THEN '' ELSE ',' END || jsonb_build_array(p_org_id, p_version_id, p_node_id, p_from, p_to)::text,
                       true);
  ELSE
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (p_org_id, p_version_id, NULL, p_node_id, p_from, p_to);
  END IF;
END;
$function$;

CREATE OR REPLACE FUNCTION holdfast_count_tally_flush() RETURNS void LANGUAGE plpgsql AS $function$
DECLARE
  kept text := current_setting('holdfast.count_tally', true);
BEGIN
  PERFORM set_config('holdfast.count_tally', '', true);
  IF left(kept, 1) = '[' AND kept <> '[' THEN
    -- In key order, as the fold adds them.
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    SELECT c->>0, c->>1, c->>2, c->>3, c->>4, count(*)
    FROM jsonb_array_elements((kept || ']')::jsonb) AS c
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5;
  END IF;
END;
$function$;
