-- Journey counts' step changes counted a statement at a time (issue 47, CPU a step). The triggers steps_count_insert
-- and steps_count_status ran holdfast_count_step once per row: a PL/pgSQL call and a look-up of the step's run, and, in
-- a settle batch, the change appended to a transaction-local setting until the batch's flush; twice for every step
-- (its insert, its settle). A settle batch writes its steps in a statement or two, so the same counting once per
-- statement over its rows (transition tables) reads each run once and keeps each move once, with how many runs made it
-- (holdfast_count_tally_add; the flush sums them).
-- What is counted and where it is written do not change: the buckets, test runs, 'converted' (count_steps_inserted.sql,
-- count_steps_updated.sql); summed into count_tallies while this release's batches collect, and otherwise one
-- count_changes row a change, as before. So a previous release's writes (its settles, its web's cancels) are counted
-- where its sweeper folds them and its web reads them, and going back to it is as after 20261213100000_count_tallies.
-- A trigger with transition tables names no columns: every UPDATE of steps fires the new one, and one that moves no
-- bucket writes nothing.
-- holdfast_count_step stays (a previous release's function; no trigger calls it) until no release names it.
-- The functions are defined here as well as in their files: the triggers call them from this migration's commit on.
-- contract: steps_count_insert, steps_count_status
SET LOCAL lock_timeout = '10s';

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
CREATE OR REPLACE FUNCTION holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM holdfast_count_tally_add(p_org_id, p_version_id, p_node_id, p_from, p_to, 1);
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
    SELECT c->>0, c->>1, c->>2, c->>3, c->>4, sum(COALESCE((c->>5)::integer, 1))
    FROM jsonb_array_elements(('[' || ltrim(kept, ',') || ']')::jsonb) AS c
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5;
  END IF;
END;
$function$;
CREATE OR REPLACE FUNCTION holdfast_count_steps_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- In key order, as the fold adds them.
  PERFORM holdfast_count_tally_add(c.org_id, c.version_id, c.node_id, NULL, c.bucket, c.n)
  FROM (SELECT s.org_id, r.version_id, s.node_id,
               CASE WHEN s.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(s.status) END AS bucket,
               count(*)::integer AS n
        FROM inserted s JOIN runs r ON r.id = s.run_id AND NOT r.test
        GROUP BY 1, 2, 3, 4
        ORDER BY 1, 2, 3, 4) c;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE FUNCTION holdfast_count_steps_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM after_rows WHERE status NOT IN ('ready', 'running', 'waiting'))
     AND NOT EXISTS (SELECT 1 FROM before_rows WHERE status NOT IN ('ready', 'running', 'waiting')) THEN
    RETURN NULL;
  END IF;
  -- In key order, as the fold adds them.
  PERFORM holdfast_count_tally_add(c.org_id, c.version_id, c.node_id, c.from_bucket, c.to_bucket, c.n)
  FROM (SELECT p.org_id, r.version_id, p.node_id,
               CASE WHEN p.old_status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(p.old_status) END AS from_bucket,
               CASE WHEN p.new_status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(p.new_status) END AS to_bucket,
               count(*)::integer AS n
        FROM unnest((SELECT array_agg(o.status ORDER BY o.id, o.org_id) FROM before_rows o),
                    (SELECT array_agg(s.status ORDER BY s.id, s.org_id) FROM after_rows s),
                    (SELECT array_agg(s.org_id ORDER BY s.id, s.org_id) FROM after_rows s),
                    (SELECT array_agg(s.run_id ORDER BY s.id, s.org_id) FROM after_rows s),
                    (SELECT array_agg(s.node_id ORDER BY s.id, s.org_id) FROM after_rows s)) AS p(old_status, new_status, org_id, run_id, node_id)
        JOIN runs r ON r.id = p.run_id AND NOT r.test
        WHERE p.old_status IS DISTINCT FROM p.new_status
          AND NOT (p.old_status IN ('ready', 'running', 'waiting') AND p.new_status IN ('ready', 'running', 'waiting'))
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5) c;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE TRIGGER "steps_count_insert" AFTER INSERT ON "steps" REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION holdfast_count_steps_inserted();
CREATE OR REPLACE TRIGGER "steps_count_status" AFTER UPDATE ON "steps" REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION holdfast_count_steps_updated();
