-- Settles a step fenced by its attempt and, in the same transaction, moves the run on by the plan the worker's walk
-- computed from the state it saw at claim time, provided the run has not changed since (seq) and is not being
-- cancelled. Otherwise it leaves the walk to the engine (a run.wake outbox row). One round trip, one commit.
--   p_status: 'done' | 'failed' | 'ready' (another attempt after p_delay_ms) | 'parked' (waits for a person)
--   p_plan:   {"steps": [{"nodeId","kind","lane","iteration","maxAttempts"}],
--              "events": [{"type","nodeId","data"}], "finish": null | {"status","error","event"}}
--   p_effect: the effect's answer {"orgId","key","owner","result","error"}, or {"release": true} to give back a
--             claim the step never used.
-- Returns {"changed": bool, "advanced": bool, "steps": [{"id","nodeId","lane"}], "claimed": <claim> | null}.
-- The run is locked first (the engine's and cancel's order, so a settle and a cancel never deadlock): when the plan
-- applies, by its own seq update (one write of the run row), else FOR UPDATE; then the step is written once. A step the plan schedules on the settling
-- worker's lane (p_claim_lane) is inserted already claimed by it (attempt 1, its lease, its effect claimed), with
-- no outbox row: local dispatch in the same commit. If the worker dies, the lease lapses and the sweeper hands the
-- step on.
-- The inline advance applies only to a run that is not held: a held run's settle writes a run.wake and the engine's
-- walk holds it. The settle hands the worker the run's budgets with its steps, as the claim does.
-- History (prisma/migrations, never edited): 20261129080000_step_functions, 20261129090000_claim_effects, 20261130010000_run_budgets, 20261201100000_lifecycle_retry.
CREATE OR REPLACE FUNCTION holdfast_step_settle(p_step_id text, p_token integer, p_worker text, p_status text, p_output jsonb, p_error jsonb, p_delay_ms double precision, p_event text, p_event_data jsonb, p_run_seq bigint, p_plan jsonb, p_claim_lane text, p_lease_ms double precision, p_effect jsonb, p_effect_kinds text[])
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  r record;
  s record;
  n record;
  advance boolean;
  new_steps jsonb := '[]'::jsonb;
  new_id text;
  claimed jsonb;
  effect jsonb;
  cause record;
BEGIN
  -- A park whose cause was cleared while this attempt ran (the connection reconnected, the breaker closed, the
  -- budget raised) becomes a plain return to ready. The cause's row is read under a share lock before anything else
  -- is locked: a reconnect, breaker close or budget change either committed first (seen here) or waits for this
  -- commit and then resumes the parked step itself.
  IF p_status = 'parked' THEN
    IF p_error->>'code' IN ('needs_reconnect', 'breaker_open') THEN
      SELECT status, breaker_state INTO cause FROM connections WHERE id = p_error->>'connectionId' FOR SHARE;
      IF (p_error->>'code' = 'needs_reconnect' AND cause.status = 'ok')
         OR (p_error->>'code' = 'breaker_open' AND cause.breaker_state = 'closed') THEN
        p_status := 'ready';
      END IF;
    ELSIF p_error->>'code' = 'budget_exhausted' THEN
      SELECT b.allowed_micros - b.reserved_micros - b.spent_micros AS left_micros INTO cause
      FROM org_budgets b WHERE b.org_id = (SELECT org_id FROM steps WHERE id = p_step_id) FOR SHARE;
      IF cause.left_micros >= COALESCE((p_error->>'estimateMicros')::bigint, 0) THEN
        p_status := 'ready';
      END IF;
    END IF;
    IF p_status = 'ready' THEN
      p_delay_ms := 0;
      p_event := 'step.deferred';
      p_event_data := jsonb_build_object('reason', 'what it waited for was resolved while it ran');
    END IF;
  END IF;

  -- The run is locked before the step (the engine's and cancel's order). When the worker's plan still applies
  -- (same seq, running, not cancelling), the run's own update is the lock: one write of the run row, not a lock
  -- and then a write.
  advance := false;
  IF p_status <> 'ready' AND p_plan IS NOT NULL THEN
    UPDATE runs SET
      seq = seq + 1, updated_at = now(),
      status = COALESCE(p_plan->'finish'->>'status', status),
      error = CASE WHEN p_plan->'finish' IS NULL OR jsonb_typeof(p_plan->'finish') = 'null' THEN error ELSE p_plan->'finish'->'error' END,
      finished_at = CASE WHEN p_plan->'finish'->>'status' IS NULL THEN finished_at ELSE now() END
    WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id)
      AND seq = p_run_seq AND status = 'running' AND cancel_requested_at IS NULL
      -- A run held by its paused automation takes no next step here: the engine's walk holds it (run.wake).
      AND held_at IS NULL
    RETURNING id, seq, false AS cancelling, version_id, input, max_steps, expires_at INTO r;
    advance := FOUND;
  END IF;
  IF NOT advance THEN
    SELECT id, seq, cancel_requested_at IS NOT NULL AS cancelling, version_id, input, max_steps, expires_at INTO r FROM runs
    WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id) FOR UPDATE;
  END IF;
  UPDATE steps SET
    status = p_status,
    output = CASE WHEN p_status = 'done' THEN p_output ELSE output END,
    error = CASE WHEN p_status = 'done' THEN NULL ELSE p_error END,
    settled_at = CASE WHEN p_status IN ('ready', 'parked') THEN NULL ELSE now() END,
    available_at = CASE WHEN p_status = 'ready' THEN now() + make_interval(secs => p_delay_ms / 1000) ELSE available_at END,
    advanced_at = CASE WHEN advance THEN now() ELSE advanced_at END,
    -- A step given back for want of a connection slot (step.deferred) or parked for a person did not use an attempt.
    deferrals = deferrals + CASE WHEN p_event = 'step.deferred' OR p_status = 'parked' THEN 1 ELSE 0 END,
    owner = NULL, lease_until = NULL, updated_at = now()
  WHERE id = p_step_id AND attempt = p_token AND status = 'running'
  RETURNING org_id, run_id, node_id, attempt, lane INTO s;
  IF NOT FOUND THEN
    -- A newer attempt holds the step. If the run was already moved on for this settle, undo it all (HF003: the
    -- caller reads it as "not changed").
    IF advance THEN
      RAISE EXCEPTION 'step % attempt % no longer holds its lease', p_step_id, p_token USING ERRCODE = 'HF003';
    END IF;
    RETURN jsonb_build_object('changed', false);
  END IF;

  -- The effect's answer commits with the step's: fenced by the effect's owner token as the step is by its attempt.
  IF p_effect IS NOT NULL AND (p_effect->>'release')::boolean IS TRUE THEN
    DELETE FROM effects
    WHERE org_id = p_effect->>'orgId' AND key = p_effect->>'key' AND owner = p_effect->>'owner'
      AND status = 'in_flight' AND attempts = 1;
  ELSIF p_effect IS NOT NULL THEN
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

  IF p_status = 'parked' THEN
    -- Waits for a person (p_error says why and which connection resumes it); a run being cancelled goes on to
    -- its cancellation instead.
    IF r.cancelling THEN
      INSERT INTO outbox (org_id, run_id, topic, payload)
      VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'cancel'));
    END IF;
    RETURN jsonb_build_object('changed', true, 'advanced', false, 'steps', '[]'::jsonb);
  END IF;

  IF p_status = 'ready' AND r.cancelling THEN
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

  IF NOT advance THEN
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'step_settled'));
    RETURN jsonb_build_object('changed', true, 'advanced', false, 'steps', '[]'::jsonb);
  END IF;

  -- Timeline order follows the walk: inline nodes, then the steps it scheduled, then how the run ended.
  INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
  SELECT s.org_id, s.run_id, e."nodeId", e.type, p_worker, e.data
  FROM jsonb_to_recordset(COALESCE(p_plan->'events', '[]'::jsonb)) AS e(type text, "nodeId" text, data jsonb);
  FOR n IN SELECT * FROM jsonb_to_recordset(COALESCE(p_plan->'steps', '[]'::jsonb))
             AS x("nodeId" text, kind text, lane text, iteration int, "maxAttempts" int)
  LOOP
    IF claimed IS NULL AND n.lane = p_claim_lane THEN
      -- Local dispatch: inserted already claimed by this worker (attempt 1 is its fencing token).
      INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, owner, attempt, lease_until)
      VALUES (s.org_id, s.run_id, n."nodeId", n.iteration, n.kind, n.lane, n."maxAttempts", 'running', p_worker, 1,
              now() + make_interval(secs => p_lease_ms / 1000))
      RETURNING id INTO new_id;
      INSERT INTO run_events (org_id, run_id, step_id, node_id, type, lane, worker, data)
      VALUES (s.org_id, s.run_id, new_id, n."nodeId", 'step.scheduled', n.lane, p_worker, jsonb_build_object('iteration', n.iteration));
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker)
      VALUES (s.org_id, s.run_id, new_id, n."nodeId", 1, 'step.claimed', n.lane, p_worker);
      effect := CASE WHEN n.kind = ANY(p_effect_kinds)
                     THEN holdfast_effect_claim(s.org_id, s.run_id, new_id, n."nodeId", n.iteration, n.kind, 1, p_lease_ms) END;
      claimed := jsonb_build_object(
        'id', new_id, 'orgId', s.org_id, 'runId', s.run_id, 'nodeId', n."nodeId", 'iteration', n.iteration,
        'kind', n.kind, 'lane', n.lane, 'attempt', 1, 'maxAttempts', n."maxAttempts", 'deferrals', 0,
        'versionId', r.version_id, 'maxSteps', r.max_steps, 'expired', COALESCE(r.expires_at <= now(), false), 'input', r.input, 'runSeq', r.seq::text, 'effect', effect);
    ELSE
      INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts)
      VALUES (s.org_id, s.run_id, n."nodeId", n.iteration, n.kind, n.lane, n."maxAttempts")
      RETURNING id INTO new_id;
      INSERT INTO outbox (org_id, run_id, topic, payload)
      VALUES (s.org_id, s.run_id, 'step.ready',
              jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'stepId', new_id, 'lane', n.lane));
      INSERT INTO run_events (org_id, run_id, step_id, node_id, type, lane, worker, data)
      VALUES (s.org_id, s.run_id, new_id, n."nodeId", 'step.scheduled', n.lane, p_worker, jsonb_build_object('iteration', n.iteration));
    END IF;
    new_steps := new_steps || jsonb_build_object('id', new_id, 'nodeId', n."nodeId", 'lane', n.lane);
  END LOOP;
  IF p_plan->'finish'->'event' IS NOT NULL THEN
    INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
    SELECT s.org_id, s.run_id, e."nodeId", e.type, p_worker, e.data
    FROM jsonb_to_record(p_plan->'finish'->'event') AS e(type text, "nodeId" text, data jsonb);
  END IF;
  IF claimed IS NOT NULL THEN
    -- The run's steps as the next step's inline walk will see them (read after every write above).
    claimed := claimed || jsonb_build_object('runSteps', holdfast_run_steps(s.run_id));
  END IF;
  RETURN jsonb_build_object('changed', true, 'advanced', true, 'steps', new_steps, 'claimed', claimed);
END;
$function$;
