-- Journey counts' changes that name no run (a step's: holdfast_count_step, holdfast_count_step_node; an edge that
-- leaves no split: holdfast_rows_insert), written now or summed at the end of the transaction's batch
-- (20261213100000_count_tallies).
-- holdfast_count_tally_start(): from here to holdfast_count_tally_flush(), in this transaction, such a change is kept
-- in transaction-local settings instead of a row of its own: holdfast.count_tally is the number of the chunk being
-- filled, and holdfast.count_tally_<chunk> holds changes as JSON arrays, about 4 kB of them (a list cut in chunks, so
-- that keeping one more copies at most a chunk, not everything kept so far: a due sweep's batch keeps a thousand). A
-- subtransaction rolled back (a stale settle in a batch) takes back what it kept, as it takes back its rows.
-- holdfast_count_tally_flush(): writes what was kept as count_tallies rows, one per organisation, version, node and
-- move with its number of runs, and ends the collecting. The caller that starts collecting must flush before it
-- returns: a change still kept at commit is lost.
-- holdfast_count_change(): one change that names no run: kept when collecting, else one count_changes row.
-- History: new in 20261213100000_count_tallies (issue 47).
CREATE OR REPLACE FUNCTION holdfast_count_tally_start() RETURNS void LANGUAGE sql AS $$
  SELECT set_config('holdfast.count_tally_0', '', true), set_config('holdfast.count_tally', '0', true);
$$;

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

CREATE OR REPLACE FUNCTION holdfast_count_tally_flush() RETURNS void LANGUAGE plpgsql AS $function$
DECLARE
  chunk text := current_setting('holdfast.count_tally', true);
  kept text;
BEGIN
  IF chunk IS NULL OR chunk = '' THEN
    RETURN;
  END IF;
  SELECT string_agg(current_setting('holdfast.count_tally_' || i), '' ORDER BY i) INTO kept
  FROM generate_series(0, chunk::integer) AS i;
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
