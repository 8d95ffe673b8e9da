-- The two statements of a step's life, as functions (PL/pgSQL keeps their plans per connection).

-- The claim as a function: PL/pgSQL keeps its plans per connection, so the hottest statement is planned once
-- instead of on every call (the same fenced UPDATE, timeline row and outbox fulfilment as before).
-- Returns null when the step cannot be claimed (live lease elsewhere, not due, settled, run finished or cancelling).
-- A claim takes the run FOR SHARE: a cancel that locked the run first is seen here; one that comes after sees this
-- step running with a live lease and waits for its settle instead of cancelling it under the worker.
CREATE FUNCTION holdfast_step_claim(p_step_id text, p_worker text, p_lease_ms float8, p_outbox_id bigint)
RETURNS jsonb AS $$
DECLARE
  s record;
  r record;
  seen jsonb;
BEGIN
  -- FOR SHARE: a cancel that locked the run first is seen here (we wait for it); one that comes after sees this
  -- step running with a live lease and waits for its settle instead of cancelling it under the worker.
  SELECT id, version_id, input, seq INTO r FROM runs
  WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id)
    AND status = 'running' AND cancel_requested_at IS NULL
  FOR SHARE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  UPDATE steps SET status = 'running', owner = p_worker, attempt = attempt + 1,
                   lease_until = now() + make_interval(secs => p_lease_ms / 1000), updated_at = now()
  WHERE id = p_step_id AND status IN ('ready', 'running')
    AND (lease_until IS NULL OR lease_until < now()) AND available_at <= now()
  RETURNING id, org_id, run_id, node_id, iteration, kind, lane, attempt, max_attempts INTO s;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker)
  VALUES (s.org_id, s.run_id, s.id, s.node_id, s.attempt, 'step.claimed', s.lane, p_worker);
  IF p_outbox_id IS NOT NULL THEN
    UPDATE outbox SET sent_at = now() WHERE id = p_outbox_id AND sent_at IS NULL;
  END IF;
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'id', o.id, 'nodeId', o.node_id, 'iteration', o.iteration, 'status', o.status,
           'output', o.output, 'error', o.error, 'advanced', o.advanced_at IS NOT NULL,
           'leased', o.status = 'running' AND o.lease_until >= now()) ORDER BY o.created_at, o.id), '[]'::jsonb)
    INTO seen FROM steps o WHERE o.run_id = s.run_id;
  RETURN jsonb_build_object(
    'id', s.id, 'orgId', s.org_id, 'runId', s.run_id, 'nodeId', s.node_id, 'iteration', s.iteration,
    'kind', s.kind, 'lane', s.lane, 'attempt', s.attempt, 'maxAttempts', s.max_attempts,
    'versionId', r.version_id, 'input', r.input, 'runSeq', r.seq::text, 'runSteps', seen);
END;
$$ LANGUAGE plpgsql;

-- Settles a step fenced by its attempt and, in the same transaction, moves the run on by the plan the worker's walk
-- computed from the state it saw at claim time, provided the run has not changed since (seq) and is not being
-- cancelled. Otherwise it leaves the walk to the engine (a run.wake outbox row). One round trip, one commit.
--   p_status: 'done' | 'failed' | 'ready' (another attempt after p_delay_ms)
--   p_plan:   {"steps": [{"nodeId","kind","lane","iteration","maxAttempts","holdMs"}],
--              "events": [{"type","nodeId","data"}], "finish": null | {"status","error","event"}}
-- Returns {"changed": bool, "advanced": bool, "steps": [{"id","nodeId","lane","outboxId"}]}.
-- One commit per step on the hot path: the run is locked before the step (the engine's and cancel's order, so a
-- settle and a cancel never deadlock); a retry of a run being cancelled wakes the engine instead of the lane; the
-- effect's answer commits with the step's (fenced by the effect's owner token, HF002 when it was taken over); and
-- the settle claims the next step when it is on the settling worker's lane (p_claim_lane; NULL = never),
-- returning it as holdfast_step_claim does, with no outbox row for it.
CREATE FUNCTION holdfast_step_settle(
  p_step_id text, p_token int, p_worker text, p_status text, p_output jsonb, p_error jsonb,
  p_delay_ms float8, p_event text, p_event_data jsonb, p_run_seq bigint, p_plan jsonb,
  p_claim_lane text, p_lease_ms float8, p_effect jsonb
) RETURNS jsonb AS $$
DECLARE
  s record;
  n record;
  new_steps jsonb := '[]'::jsonb;
  step_id text;
  outbox_id bigint;
  claim_id text;
BEGIN
  -- Lock order run -> step, as the engine and cancel take them: a settle and a cancel never deadlock.
  PERFORM 1 FROM runs WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id) FOR UPDATE;
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

  -- The effect's answer commits with the step's: fenced by the effect's owner token as the step is by its attempt.
  IF p_effect IS NOT NULL THEN
    UPDATE effects SET status = 'settled', result = p_effect->'result',
                       error = CASE WHEN jsonb_typeof(p_effect->'error') = 'null' THEN NULL ELSE p_effect->'error' END,
                       owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now()
    WHERE org_id = p_effect->>'orgId' AND key = p_effect->>'key' AND owner = p_effect->>'owner' AND status = 'in_flight';
    IF NOT FOUND THEN
      RAISE EXCEPTION 'effect % was taken over by another attempt', p_effect->>'key' USING ERRCODE = 'HF002';
    END IF;
  END IF;

  INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
  VALUES (s.org_id, s.run_id, p_step_id, s.node_id, s.attempt, p_event, s.lane, p_worker, p_event_data);

  IF p_status = 'ready' AND EXISTS (SELECT 1 FROM runs WHERE id = s.run_id AND cancel_requested_at IS NOT NULL) THEN
    -- Nobody will claim the retry of a run being cancelled: the engine finishes the cancellation instead.
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'cancel'));
    RETURN jsonb_build_object('changed', true, 'advanced', false, 'steps', '[]'::jsonb);
  END IF;

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
                 AS x("nodeId" text, kind text, lane text, iteration int, "maxAttempts" int)
      LOOP
        INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts)
        VALUES (s.org_id, s.run_id, n."nodeId", n.iteration, n.kind, n.lane, n."maxAttempts")
        RETURNING id INTO step_id;
        outbox_id := NULL;
        IF claim_id IS NULL AND n.lane = p_claim_lane THEN
          -- Local dispatch: this worker claims the step in this same commit, so no wake-up is needed; if it dies,
          -- the step's lease lapses and the sweeper hands it on.
          claim_id := step_id;
        ELSE
          INSERT INTO outbox (org_id, run_id, topic, payload)
          VALUES (s.org_id, s.run_id, 'step.ready',
                  jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'stepId', step_id, 'lane', n.lane))
          RETURNING id INTO outbox_id;
        END IF;
        INSERT INTO run_events (org_id, run_id, step_id, node_id, type, lane, worker, data)
        VALUES (s.org_id, s.run_id, step_id, n."nodeId", 'step.scheduled', n.lane, p_worker,
                jsonb_build_object('iteration', n.iteration));
        new_steps := new_steps || jsonb_build_object('id', step_id, 'nodeId', n."nodeId", 'lane', n.lane);
      END LOOP;
      IF p_plan->'finish'->'event' IS NOT NULL THEN
        INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
        SELECT s.org_id, s.run_id, e."nodeId", e.type, p_worker, e.data
        FROM jsonb_to_record(p_plan->'finish'->'event') AS e(type text, "nodeId" text, data jsonb);
      END IF;
      RETURN jsonb_build_object('changed', true, 'advanced', true, 'steps', new_steps,
        'claimed', CASE WHEN claim_id IS NULL THEN NULL
                        ELSE holdfast_step_claim(claim_id, p_worker, p_lease_ms, NULL) END);
    END IF;
  END IF;

  INSERT INTO outbox (org_id, run_id, topic, payload)
  VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'step_settled'));
  RETURN jsonb_build_object('changed', true, 'advanced', false, 'steps', '[]'::jsonb);
END;
$$ LANGUAGE plpgsql;
