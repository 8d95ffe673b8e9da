-- Inserts the rows of a walk exactly as the applier prepared them (apply/rows.ts, type PlanRows in sql/plan-rows.ts):
-- new steps (ids made by the applier; a step claimed by the settling worker carries its owner, attempt and lease
-- length, the lease measured from now()), timeline rows in the walk's order, outbox rows (delayMs from now()). It
-- decides nothing: what a scheduled step brings is written once, in TypeScript. Called by holdfast_run_start and
-- holdfast_step_settle inside their one statement.
-- History: new in 20261201121000_one_applier (this file is its only definition).
CREATE OR REPLACE FUNCTION holdfast_rows_insert(p_rows jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- Empty lists insert nothing (the outbox's NOTIFY trigger fires per statement, even for none).
  IF jsonb_array_length(COALESCE(p_rows->'steps', '[]'::jsonb)) > 0 THEN
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, owner, attempt, lease_until)
    SELECT s.id, s."orgId", s."runId", s."nodeId", s.iteration, s.kind, s.lane, s."maxAttempts", s.status, s.owner,
           COALESCE(s.attempt, 0), now() + make_interval(secs => s."leaseMs" / 1000)
    FROM jsonb_to_recordset(COALESCE(p_rows->'steps', '[]'::jsonb))
      AS s(id text, "orgId" text, "runId" text, "nodeId" text, iteration int, kind text, lane text, "maxAttempts" int,
           status text, owner text, attempt int, "leaseMs" float8);
  END IF;
  IF jsonb_array_length(COALESCE(p_rows->'events', '[]'::jsonb)) > 0 THEN
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    SELECT e."orgId", e."runId", e."stepId", e."nodeId", e.attempt, e.type, e.lane, e.worker, e.data
    FROM ROWS FROM (jsonb_to_recordset(COALESCE(p_rows->'events', '[]'::jsonb))
           AS ("orgId" text, "runId" text, "stepId" text, "nodeId" text, attempt int, type text, lane text, worker text, data jsonb))
         WITH ORDINALITY AS e("orgId", "runId", "stepId", "nodeId", attempt, type, lane, worker, data, n)
    ORDER BY e.n;
  END IF;
  IF jsonb_array_length(COALESCE(p_rows->'outbox', '[]'::jsonb)) > 0 THEN
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    SELECT o."orgId", o."runId", o.topic, o.payload, now() + make_interval(secs => COALESCE(o."delayMs", 0) / 1000)
    FROM ROWS FROM (jsonb_to_recordset(COALESCE(p_rows->'outbox', '[]'::jsonb))
           AS ("orgId" text, "runId" text, topic text, payload jsonb, "delayMs" float8))
         WITH ORDINALITY AS o("orgId", "runId", topic, payload, "delayMs", n)
    ORDER BY o.n;
  END IF;
END;
$function$;
