-- Inserts the rows of a walk exactly as the applier prepared them (run/apply/rows.ts, type PlanRows in store/sql/plan-rows.ts):
-- new steps (ids made by the applier; a step claimed by the settling worker carries its owner, attempt and lease
-- length, the lease measured from now()), timeline rows in the walk's order, outbox rows (delayMs from now()). It
-- decides nothing: what a scheduled step brings is written once, in TypeScript. Called by holdfast_run_start and
-- holdfast_step_settle inside their one statement, with the run that statement holds (created, updated or locked).
-- Tenancy: steps, the timeline and the outbox keep no foreign key to their run (20261202110000_append_only_keys,
-- 20261202130000_steps_run_key), so this function is where a row is kept to the run its caller holds: every row must
-- name that run and its organisation, an outbox payload that names a run, an organisation or a step must name that
-- run, that organisation and a step inserted here (a wake-up is for a step its walk scheduled), and the step a settle
-- claims ('claim') must be one inserted here; or nothing is written (HF005, the whole statement fails). A walk only
-- ever writes rows of its own run; a row naming another is a defect of the caller, never a cross-tenant write (the
-- settle then records its step's outcome without the walk and leaves the run to the engine: store/sql/steps.ts).
-- Edges ('edges': the walk's take_edge commands as journey count changes, run/apply/rows.ts edgeCount) name no run:
-- they are written for p_run_id alone, with its version, and only when that run is of p_org_id and not a test run
-- (count_changes, 20261207100000_journey_counts). An edge that leaves a split ("run": true) keeps p_run_id on its row;
-- any other is a change without a run (holdfast_count_change: summed in a settle batch, 20261213100000_count_tallies).
-- History: new in 20261201121000_one_applier; p_org_id and p_run_id since 2026-12-02 (issue 19). The one-argument
-- signature is dropped here, not by a migration: the function files are applied in one transaction after the
-- migrations, so the old signature goes in the same commit as its callers' new bodies (run_start.sql,
-- step_settle.sql) and no start or settle ever finds one without the other.
DROP FUNCTION IF EXISTS holdfast_rows_insert(jsonb);
CREATE OR REPLACE FUNCTION holdfast_rows_insert(p_org_id text, p_run_id text, p_rows jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  wanted int;
  written int;
  version text;
BEGIN
  -- Empty lists insert nothing (the outbox's NOTIFY trigger fires per statement, even for none).
  wanted := jsonb_array_length(COALESCE(p_rows->'steps', '[]'::jsonb));
  IF wanted > 0 THEN
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, owner, attempt, lease_until)
    SELECT s.id, s."orgId", s."runId", s."nodeId", s.iteration, s.kind, s.lane, s."maxAttempts", s.status, s.owner,
           COALESCE(s.attempt, 0), now() + make_interval(secs => s."leaseMs" / 1000)
    FROM jsonb_to_recordset(p_rows->'steps')
      AS s(id text, "orgId" text, "runId" text, "nodeId" text, iteration int, kind text, lane text, "maxAttempts" int,
           status text, owner text, attempt int, "leaseMs" float8)
    WHERE s."orgId" = p_org_id AND s."runId" = p_run_id;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> wanted THEN
      RAISE EXCEPTION 'a step row names another run than %', p_run_id USING ERRCODE = 'HF005';
    END IF;
  END IF;
  IF jsonb_typeof(p_rows->'claim') = 'object' AND NOT EXISTS (
       SELECT 1 FROM jsonb_array_elements(COALESCE(p_rows->'steps', '[]'::jsonb)) s WHERE s->>'id' = p_rows->'claim'->>'stepId') THEN
    RAISE EXCEPTION 'the claimed step is not one this walk of % inserted', p_run_id USING ERRCODE = 'HF005';
  END IF;
  wanted := jsonb_array_length(COALESCE(p_rows->'events', '[]'::jsonb));
  IF wanted > 0 THEN
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    SELECT e."orgId", e."runId", e."stepId", e."nodeId", e.attempt, e.type, e.lane, e.worker, e.data
    FROM ROWS FROM (jsonb_to_recordset(p_rows->'events')
           AS ("orgId" text, "runId" text, "stepId" text, "nodeId" text, attempt int, type text, lane text, worker text, data jsonb))
         WITH ORDINALITY AS e("orgId", "runId", "stepId", "nodeId", attempt, type, lane, worker, data, n)
    WHERE e."orgId" = p_org_id AND e."runId" = p_run_id
    ORDER BY e.n;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> wanted THEN
      RAISE EXCEPTION 'a timeline row names another run than %', p_run_id USING ERRCODE = 'HF005';
    END IF;
  END IF;
  wanted := jsonb_array_length(COALESCE(p_rows->'outbox', '[]'::jsonb));
  IF wanted > 0 THEN
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    SELECT o."orgId", o."runId", o.topic, o.payload, now() + make_interval(secs => COALESCE(o."delayMs", 0) / 1000)
    FROM ROWS FROM (jsonb_to_recordset(p_rows->'outbox')
           AS ("orgId" text, "runId" text, topic text, payload jsonb, "delayMs" float8))
         WITH ORDINALITY AS o("orgId", "runId", topic, payload, "delayMs", n)
    WHERE o."orgId" = p_org_id AND o."runId" = p_run_id
      AND COALESCE(o.payload->>'orgId', p_org_id) = p_org_id AND COALESCE(o.payload->>'runId', p_run_id) = p_run_id
      AND (o.payload->>'stepId' IS NULL
           OR o.payload->>'stepId' IN (SELECT s->>'id' FROM jsonb_array_elements(COALESCE(p_rows->'steps', '[]'::jsonb)) s))
    ORDER BY o.n;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> wanted THEN
      RAISE EXCEPTION 'an outbox row or its payload names another run than %, or a step it did not insert', p_run_id USING ERRCODE = 'HF005';
    END IF;
  END IF;
  IF jsonb_array_length(COALESCE(p_rows->'edges', '[]'::jsonb)) > 0 THEN
    SELECT r.version_id INTO version FROM runs r WHERE r.id = p_run_id AND r.org_id = p_org_id AND NOT r.test;
    IF FOUND THEN
      -- An edge that leaves a split names the run (absent "run": a previous release's edge, which named it).
      INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
      SELECT p_org_id, version, p_run_id, e."nodeId", e.bucket
      FROM jsonb_to_recordset(p_rows->'edges') AS e("nodeId" text, bucket text, run boolean)
      WHERE e.run IS NOT FALSE;
      -- Any other: no run, summed with its neighbours' when the transaction collects (count_tally_start.sql).
      PERFORM holdfast_count_change(p_org_id, version, e."nodeId", NULL, e.bucket)
      FROM jsonb_to_recordset(p_rows->'edges') AS e("nodeId" text, bucket text, run boolean)
      WHERE e.run IS FALSE;
    END IF;
  END IF;
END;
$function$;
