-- The effect ledger's claim moves into the step's claim (issue 3: one commit per chained effect step, not two).
-- holdfast_step_claim takes the kinds that run through the ledger; for those it claims or reads the effect row in
-- the same commit as the step. provider_idempotent is now written by the worker when it learns it (the claim does
-- not read node config); NULL means "decided by the node's connector".
-- holdfast_step_settle checks the run's seq before it writes the step (one write of the step row, not two), inserts
-- a locally dispatched next step already claimed (no insert-then-update), claims its effect, and can give an
-- unused effect claim back (p_effect.release).

ALTER TABLE effects ALTER COLUMN provider_idempotent DROP NOT NULL;

-- Times a claimed step was given back unstarted because its connection had no free slot (issue 6): they are not
-- attempts, so the retry budget counts attempt - deferrals while the fencing token (attempt) still only grows.
ALTER TABLE steps ADD COLUMN deferrals INTEGER NOT NULL DEFAULT 0;

DROP FUNCTION holdfast_step_settle(text, int, text, text, jsonb, jsonb, float8, text, jsonb, bigint, jsonb, text, float8, jsonb);
DROP FUNCTION holdfast_step_claim(text, text, float8, bigint);

-- The effect ledger's claim-or-read for one attempt of an effect step: key run/node/iteration (never the attempt),
-- owner step:attempt, the step's lease. Returns {"claimed": true} or {"claimed": false, "row": {...}} (what is there).
CREATE FUNCTION holdfast_effect_claim(p_org_id text, p_run_id text, p_step_id text, p_node_id text, p_iteration int,
                                      p_kind text, p_attempt int, p_lease_ms float8)
RETURNS jsonb AS $$
DECLARE
  eff_key text := p_run_id || '/' || p_node_id || '/' || p_iteration;
  found_row jsonb;
BEGIN
  INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until)
  VALUES (p_org_id, p_run_id, p_step_id, eff_key, p_kind, 'in_flight', p_step_id || ':' || p_attempt,
          now() + make_interval(secs => p_lease_ms / 1000))
  ON CONFLICT (org_id, key) DO NOTHING;
  IF FOUND THEN
    RETURN jsonb_build_object('claimed', true);
  END IF;
  SELECT jsonb_build_object(
           'key', e.key, 'status', e.status, 'owner', e.owner, 'attempts', e.attempts,
           'providerIdempotent', e.provider_idempotent, 'result', e.result, 'error', e.error,
           'firstAttemptAt', e.first_attempt_at,
           'leaseLeftMs', GREATEST(0, EXTRACT(EPOCH FROM e.lease_until - now()) * 1000)::float8)
    INTO found_row FROM effects e WHERE e.org_id = p_org_id AND e.key = eff_key;
  RETURN jsonb_build_object('claimed', false, 'row', found_row);
END;
$$ LANGUAGE plpgsql;

-- The run's steps as the walk sees them (walk/walk.ts StepState), for a worker's inline walk after its step.
CREATE FUNCTION holdfast_run_steps(p_run_id text) RETURNS jsonb AS $$
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'id', o.id, 'nodeId', o.node_id, 'iteration', o.iteration, 'status', o.status,
           'output', o.output, 'error', o.error, 'advanced', o.advanced_at IS NOT NULL,
           'leased', o.status = 'running' AND o.lease_until >= now()) ORDER BY o.created_at, o.id), '[]'::jsonb)
  FROM steps o WHERE o.run_id = p_run_id;
$$ LANGUAGE sql STABLE;


CREATE FUNCTION holdfast_step_claim(p_step_id text, p_worker text, p_lease_ms float8, p_outbox_id bigint, p_effect_kinds text[])
RETURNS jsonb AS $$
DECLARE
  s record;
  r record;
  seen jsonb;
  effect jsonb;
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
  RETURNING id, org_id, run_id, node_id, iteration, kind, lane, attempt, max_attempts, deferrals INTO s;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker)
  VALUES (s.org_id, s.run_id, s.id, s.node_id, s.attempt, 'step.claimed', s.lane, p_worker);
  IF s.kind = ANY(p_effect_kinds) THEN
    effect := holdfast_effect_claim(s.org_id, s.run_id, s.id, s.node_id, s.iteration, s.kind, s.attempt, p_lease_ms);
  END IF;
  IF p_outbox_id IS NOT NULL THEN
    UPDATE outbox SET sent_at = now() WHERE id = p_outbox_id AND sent_at IS NULL;
  END IF;
  seen := holdfast_run_steps(s.run_id);
  RETURN jsonb_build_object(
    'id', s.id, 'orgId', s.org_id, 'runId', s.run_id, 'nodeId', s.node_id, 'iteration', s.iteration,
    'kind', s.kind, 'lane', s.lane, 'attempt', s.attempt, 'maxAttempts', s.max_attempts, 'deferrals', s.deferrals,
    'versionId', r.version_id, 'input', r.input, 'runSeq', r.seq::text, 'runSteps', seen, 'effect', effect);
END;
$$ LANGUAGE plpgsql;

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
CREATE FUNCTION holdfast_step_settle(
  p_step_id text, p_token int, p_worker text, p_status text, p_output jsonb, p_error jsonb,
  p_delay_ms float8, p_event text, p_event_data jsonb, p_run_seq bigint, p_plan jsonb,
  p_claim_lane text, p_lease_ms float8, p_effect jsonb, p_effect_kinds text[]
) RETURNS jsonb AS $$
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
    RETURNING id, seq, false AS cancelling, version_id, input INTO r;
    advance := FOUND;
  END IF;
  IF NOT advance THEN
    SELECT id, seq, cancel_requested_at IS NOT NULL AS cancelling, version_id, input INTO r FROM runs
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
        'versionId', r.version_id, 'input', r.input, 'runSeq', r.seq::text, 'effect', effect);
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
$$ LANGUAGE plpgsql;

