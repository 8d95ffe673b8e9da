-- Starts one logical run per (org, start_key) in one statement: the run row, its run.started event and its first
-- walk (the plan the starter's walk computed from the graph and the input alone: inline nodes' events, the first
-- steps with their step.ready outbox rows, or how the run ended). A repeat finds the run and is counted by
-- holdfast_run_duplicate. A first walk that needs the engine (a timer) takes the transactional path in TypeScript.
-- p_contact_id: holdfast_contact_resolve(...) in the same statement. Returns {"runId": text, "inserted": bool}.
-- History (prisma/migrations, never edited): 20261129100000_contacts_connections, 20261201111000_defects_a.
CREATE OR REPLACE FUNCTION holdfast_run_start(
  p_org_id text, p_automation_id text, p_version_id text, p_start_key text, p_input jsonb,
  p_event_data jsonb, p_plan jsonb, p_worker text, p_contact_id text
) RETURNS jsonb AS $$
DECLARE
  run_id text;
  n record;
  new_id text;
BEGIN
  INSERT INTO runs (org_id, automation_id, version_id, start_key, input, seq, contact_id)
  VALUES (p_org_id, p_automation_id, p_version_id, p_start_key, p_input, 1, p_contact_id)
  ON CONFLICT (org_id, start_key) DO NOTHING
  RETURNING id INTO run_id;
  IF run_id IS NULL THEN
    -- ON CONFLICT waited for the other start to commit; in PL/pgSQL each statement takes a fresh snapshot
    -- (READ COMMITTED), so this SELECT sees the committed row.
    SELECT id INTO run_id FROM runs WHERE org_id = p_org_id AND start_key = p_start_key;
    IF run_id IS NULL THEN
      RAISE EXCEPTION 'start key % conflicted but no run holds it', p_start_key;
    END IF;
    PERFORM holdfast_run_duplicate(p_org_id, run_id, p_event_data);
    RETURN jsonb_build_object('runId', run_id, 'inserted', false);
  END IF;
  INSERT INTO run_events (org_id, run_id, type, data) VALUES (p_org_id, run_id, 'run.started', p_event_data);
  INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
  SELECT p_org_id, run_id, e."nodeId", e.type, p_worker, e.data
  FROM jsonb_to_recordset(COALESCE(p_plan->'events', '[]'::jsonb)) AS e(type text, "nodeId" text, data jsonb);
  FOR n IN SELECT * FROM jsonb_to_recordset(COALESCE(p_plan->'steps', '[]'::jsonb))
             AS x("nodeId" text, kind text, lane text, iteration int, "maxAttempts" int)
  LOOP
    INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts)
    VALUES (p_org_id, run_id, n."nodeId", n.iteration, n.kind, n.lane, n."maxAttempts")
    RETURNING id INTO new_id;
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (p_org_id, run_id, 'step.ready', jsonb_build_object('orgId', p_org_id, 'runId', run_id, 'stepId', new_id, 'lane', n.lane));
    INSERT INTO run_events (org_id, run_id, step_id, node_id, type, lane, worker, data)
    VALUES (p_org_id, run_id, new_id, n."nodeId", 'step.scheduled', n.lane, p_worker, jsonb_build_object('iteration', n.iteration));
  END LOOP;
  IF p_plan->'finish' IS NOT NULL AND jsonb_typeof(p_plan->'finish') <> 'null' THEN
    UPDATE runs SET status = p_plan->'finish'->>'status', error = p_plan->'finish'->'error', finished_at = now(),
                    seq = seq + 1, updated_at = now()
    WHERE id = run_id;
    INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
    SELECT p_org_id, run_id, e."nodeId", e.type, p_worker, e.data
    FROM jsonb_to_record(p_plan->'finish'->'event') AS e(type text, "nodeId" text, data jsonb);
  END IF;
  RETURN jsonb_build_object('runId', run_id, 'inserted', true);
END;
$$ LANGUAGE plpgsql;
