-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "seq" BIGINT NOT NULL DEFAULT 0;


-- ---------------------------------------------------------------------------------------------------------------
-- Hand-written: what Prisma cannot express. Keep below the generated part.
-- ---------------------------------------------------------------------------------------------------------------

-- The relay publishes rows once they are due (retries wait in the outbox; rows held for a worker's local
-- dispatch wait until their hold lapses), oldest first.
DROP INDEX IF EXISTS "outbox_unsent_idx";
CREATE INDEX "outbox_unsent_due_idx" ON "outbox" ("available_at", "id") WHERE sent_at IS NULL;

-- NOTIFY the relay only when a statement inserted a row that is due now: held and delayed rows are found by its
-- poll when they come due, so a worker's local dispatch does not wake the relay for nothing.
DROP TRIGGER outbox_notify ON "outbox";
CREATE OR REPLACE FUNCTION holdfast_notify_outbox() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted WHERE available_at <= now()) THEN
    PERFORM pg_notify('holdfast_outbox', '');
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER outbox_notify AFTER INSERT ON "outbox"
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION holdfast_notify_outbox();

-- Settles a step fenced by its attempt and, in the same transaction, moves the run on by the plan the worker's walk
-- computed from the state it saw at claim time, provided the run has not changed since (seq) and is not being
-- cancelled. Otherwise it leaves the walk to the engine (a run.wake outbox row). One round trip, one commit.
--   p_status: 'done' | 'failed' | 'ready' (another attempt after p_delay_ms)
--   p_plan:   {"steps": [{"nodeId","kind","lane","iteration","maxAttempts","holdMs"}],
--              "events": [{"type","nodeId","data"}], "finish": null | {"status","error","event"}}
-- Returns {"changed": bool, "advanced": bool, "steps": [{"id","nodeId","lane","outboxId"}]}.
CREATE FUNCTION holdfast_step_settle(
  p_step_id text, p_token int, p_worker text, p_status text, p_output jsonb, p_error jsonb,
  p_delay_ms float8, p_event text, p_event_data jsonb, p_run_seq bigint, p_plan jsonb
) RETURNS jsonb AS $$
DECLARE
  s record;
  n record;
  new_steps jsonb := '[]'::jsonb;
  step_id text;
  outbox_id bigint;
BEGIN
  UPDATE steps SET
    status = p_status,
    output = CASE WHEN p_status = 'done' THEN p_output ELSE output END,
    error = CASE WHEN p_status = 'done' THEN NULL ELSE p_error END,
    settled_at = CASE WHEN p_status = 'ready' THEN NULL ELSE now() END,
    available_at = CASE WHEN p_status = 'ready' THEN now() + make_interval(secs => p_delay_ms / 1000) ELSE available_at END,
    owner = NULL, lease_until = NULL, updated_at = now()
  WHERE id = p_step_id AND attempt = p_token AND status = 'running'
  RETURNING org_id, run_id, node_id, attempt, lane INTO s;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('changed', false);
  END IF;

  INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
  VALUES (s.org_id, s.run_id, p_step_id, s.node_id, s.attempt, p_event, s.lane, p_worker, p_event_data);

  IF p_status = 'ready' THEN
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    VALUES (s.org_id, s.run_id, 'step.ready',
            jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'stepId', p_step_id, 'lane', s.lane),
            now() + make_interval(secs => p_delay_ms / 1000));
    RETURN jsonb_build_object('changed', true, 'advanced', false, 'steps', '[]'::jsonb);
  END IF;

  IF p_plan IS NOT NULL THEN
    UPDATE runs SET
      seq = seq + 1, updated_at = now(),
      status = COALESCE(p_plan->'finish'->>'status', status),
      error = CASE WHEN p_plan->'finish' IS NULL OR jsonb_typeof(p_plan->'finish') = 'null' THEN error ELSE p_plan->'finish'->'error' END,
      finished_at = CASE WHEN p_plan->'finish'->>'status' IS NULL THEN finished_at ELSE now() END
    WHERE id = s.run_id AND seq = p_run_seq AND status = 'running' AND cancel_requested_at IS NULL;
    IF FOUND THEN
      UPDATE steps SET advanced_at = now() WHERE id = p_step_id;
      -- Timeline order follows the walk: inline nodes, then the steps it scheduled, then how the run ended.
      INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
      SELECT s.org_id, s.run_id, e."nodeId", e.type, p_worker, e.data
      FROM jsonb_to_recordset(COALESCE(p_plan->'events', '[]'::jsonb)) AS e(type text, "nodeId" text, data jsonb);
      FOR n IN SELECT * FROM jsonb_to_recordset(COALESCE(p_plan->'steps', '[]'::jsonb))
                 AS x("nodeId" text, kind text, lane text, iteration int, "maxAttempts" int, "holdMs" float8)
      LOOP
        INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts)
        VALUES (s.org_id, s.run_id, n."nodeId", n.iteration, n.kind, n.lane, n."maxAttempts")
        RETURNING id INTO step_id;
        INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
        VALUES (s.org_id, s.run_id, 'step.ready',
                jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'stepId', step_id, 'lane', n.lane),
                now() + make_interval(secs => COALESCE(n."holdMs", 0) / 1000))
        RETURNING id INTO outbox_id;
        INSERT INTO run_events (org_id, run_id, step_id, node_id, type, lane, worker, data)
        VALUES (s.org_id, s.run_id, step_id, n."nodeId", 'step.scheduled', n.lane, p_worker,
                jsonb_build_object('iteration', n.iteration));
        new_steps := new_steps || jsonb_build_object('id', step_id, 'nodeId', n."nodeId", 'lane', n.lane, 'outboxId', outbox_id::text);
      END LOOP;
      IF p_plan->'finish'->'event' IS NOT NULL THEN
        INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
        SELECT s.org_id, s.run_id, e."nodeId", e.type, p_worker, e.data
        FROM jsonb_to_record(p_plan->'finish'->'event') AS e(type text, "nodeId" text, data jsonb);
      END IF;
      RETURN jsonb_build_object('changed', true, 'advanced', true, 'steps', new_steps);
    END IF;
  END IF;

  INSERT INTO outbox (org_id, run_id, topic, payload)
  VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'step_settled'));
  RETURN jsonb_build_object('changed', true, 'advanced', false, 'steps', '[]'::jsonb);
END;
$$ LANGUAGE plpgsql;
