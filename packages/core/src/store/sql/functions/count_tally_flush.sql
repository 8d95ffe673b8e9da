-- Writes the changes collected since holdfast_count_tally_start (count_tally_start.sql) as count_tallies rows, one per
-- organisation, version, node and move with its number of runs, and ends the collecting (nothing collected: nothing).
-- History: new in 20261213100000_count_tallies (issue 47).
CREATE OR REPLACE FUNCTION holdfast_count_tally_flush() RETURNS void LANGUAGE plpgsql AS $function$
DECLARE
  chunk text := current_setting('holdfast.count_tally', true);
  kept text;
BEGIN
  IF chunk IS NULL OR chunk = '' THEN
    RETURN;
  END IF;
  -- Nothing collected (a settle batch whose set counted its own): no read of the chunks.
  IF chunk = '0' AND current_setting('holdfast.count_tally_0') = '' THEN
    PERFORM set_config('holdfast.count_tally', '', true);
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
