-- Journey counts' changes that name no run (a step's: holdfast_count_step, holdfast_count_step_node; an edge that
-- leaves no split: holdfast_rows_insert), written now or summed at the end of the transaction's batch
-- (20261213100000_count_tallies).
-- holdfast_count_tally_start(): from here to holdfast_count_tally_flush(), in this transaction, such a change is kept
-- in transaction-local settings instead of a row of its own: holdfast.count_tally says '<chunk>:<changes in it>', and
-- holdfast.count_tally_<chunk> holds up to 32 changes as JSON arrays (a list cut in chunks, so that keeping one more
-- copies at most a chunk, not everything kept so far: a due sweep's batch keeps a thousand). A subtransaction rolled
-- back (a stale settle in a batch) takes back what it kept, as it takes back its rows.
-- holdfast_count_tally_flush(): writes what was kept as count_tallies rows, one per organisation, version, node and
-- move with its number of runs, and ends the collecting. The caller that starts collecting must flush before it
-- returns: a change still kept at commit is lost.
-- holdfast_count_change(): one change that names no run: kept when collecting, else one count_changes row.
-- History: new in 20261213100000_count_tallies (issue 47).
CREATE OR REPLACE FUNCTION holdfast_count_tally_start() RETURNS void LANGUAGE sql AS $$
  SELECT set_config('holdfast.count_tally_0', '', true), set_config('holdfast.count_tally', '0:0', true);
$$;

CREATE OR REPLACE FUNCTION holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  state text := current_setting('holdfast.count_tally', true);
  chunk integer;
  kept integer;
  name text;
BEGIN
  IF state IS NULL OR state = '' THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (p_org_id, p_version_id, NULL, p_node_id, p_from, p_to);
    RETURN;
  END IF;
  chunk := split_part(state, ':', 1)::integer;
  kept := split_part(state, ':', 2)::integer;
  IF kept >= 32 THEN
    chunk := chunk + 1;
    kept := 0;
    PERFORM set_config('holdfast.count_tally_' || chunk, '', true);
  END IF;
  name := 'holdfast.count_tally_' || chunk;
  PERFORM set_config(name, current_setting(name) || ',' || jsonb_build_array(p_org_id, p_version_id, p_node_id, p_from, p_to)::text, true);
  PERFORM set_config('holdfast.count_tally', chunk || ':' || (kept + 1), true);
END;
$function$;

CREATE OR REPLACE FUNCTION holdfast_count_tally_flush() RETURNS void LANGUAGE plpgsql AS $function$
DECLARE
  state text := current_setting('holdfast.count_tally', true);
  kept text;
BEGIN
  IF state IS NULL OR state = '' THEN
    RETURN;
  END IF;
  SELECT string_agg(current_setting('holdfast.count_tally_' || i), '' ORDER BY i) INTO kept
  FROM generate_series(0, split_part(state, ':', 1)::integer) AS i;
  PERFORM set_config('holdfast.count_tally', '', true);
  IF kept <> '' THEN
    -- In key order, as the fold adds them.
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    SELECT c->>0, c->>1, c->>2, c->>3, c->>4, count(*)
    FROM jsonb_array_elements(('[' || ltrim(kept, ',') || ']')::jsonb) AS c
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5;
  END IF;
END;
$function$;
