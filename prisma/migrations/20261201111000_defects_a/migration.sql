-- Issue 17, defects (first part).
--
-- 1. Repeated deliveries of one start key (a provider retrying, someone replaying a request) are counted on the run
--    instead of each writing a timeline row: 1,000 deliveries of one id used to leave 999 run.duplicate_start rows.
--    The run keeps how many repeats came and when the latest did; its timeline keeps the first `kept` (3), numbered,
--    the last of them saying that later ones are only counted. A repeat changes nothing else about the run (not its
--    seq, not updated_at: it is not progress, and the sweeper judges quiet runs by updated_at).
ALTER TABLE "runs" ADD COLUMN "duplicate_deliveries" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "last_duplicate_at" TIMESTAMPTZ(6),
  ADD CONSTRAINT "runs_duplicate_deliveries_check" CHECK (duplicate_deliveries >= 0);

-- One repeat of the run's start: counted (the UPDATE serialises concurrent repeats on the row, so each gets its own
-- number and the bound is exact), and written to the timeline only while it is among the first `kept`. Both start
-- paths call it: holdfast_run_start below and the engine's transactional start (sql/runs.ts runsRecordDuplicate).
-- Returns the run's count of repeats so far.
CREATE FUNCTION holdfast_run_duplicate(p_org_id text, p_run_id text, p_event_data jsonb) RETURNS integer AS $$
DECLARE
  kept CONSTANT integer := 3;
  n integer;
BEGIN
  UPDATE runs SET duplicate_deliveries = duplicate_deliveries + 1, last_duplicate_at = now()
  WHERE org_id = p_org_id AND id = p_run_id
  RETURNING duplicate_deliveries INTO n;
  IF n IS NULL THEN
    RAISE EXCEPTION 'run % not found to count a repeated start', p_run_id;
  END IF;
  IF n <= kept THEN
    INSERT INTO run_events (org_id, run_id, type, data)
    VALUES (p_org_id, p_run_id, 'run.duplicate_start',
            COALESCE(p_event_data, '{}'::jsonb) || jsonb_build_object('duplicate', n)
            || CASE WHEN n = kept
                    THEN jsonb_build_object('more', 'later repeats are counted on the run, not written here')
                    ELSE '{}'::jsonb END);
  END IF;
  RETURN n;
END;
$$ LANGUAGE plpgsql;

-- holdfast_run_start as defined in 20261129100000_contacts_connections, with a repeat counted by
-- holdfast_run_duplicate instead of always writing run.duplicate_start.
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

-- 2. An email sent after an approval must be the email the approver saw. An approval step that names the send_email
--    step it approves (config `email`) renders that step's email when it asks, shows it, and stores here the digests
--    of what it showed: {"node": <send step id>, "all": sha256 of the whole message, "to", "subject", "text", "html":
--    sha256 of each part (null when the part is absent)}. Only digests: nothing of the text is copied (erasure
--    scrubs title and content; these reveal nothing). The send step compares at send time (connectors/send-email.ts).
ALTER TABLE "approvals" ADD COLUMN "email_digest" JSONB;
