-- Settles a step fenced by its attempt and, in the same transaction, moves the run on by the walk the worker made
-- from the state it saw at claim time, provided the run has not changed since (seq) and is not being cancelled.
-- Otherwise it leaves the walk to the engine (a run.wake outbox row). One round trip, one commit.
--   p_status: 'done' | 'failed' | 'ready' (another attempt after p_delay_ms) | 'parked' (waits for a person)
--   p_rows:   the walk's rows as the worker's applier prepared them (run/apply/rows.ts, PlanRows in store/sql/plan-rows.ts):
--             inserted as given by holdfast_rows_insert; 'finish' is written with this function's own run update.
--             A step the walk scheduled on the worker's lane comes already claimed by it ('claim': local dispatch:
--             running under its lease, no outbox row); its effect key is claimed here when 'claim'.'effect'.
--   p_retry:  the step's own step.ready outbox row (built by the applier), written due after p_delay_ms when the step
--             goes back to ready.
--   p_effect: the effect's answer {"orgId","key","owner","result","error"}, or {"release": true} to give back a
--             claim the step never used.
-- Returns {"changed": bool, "advanced": bool, "claimed": <the run as the claimed step's walk needs it> | null}.
-- The run is locked first (the engine's and cancel's order, so a settle and a cancel never deadlock): when the walk
-- applies, by its own seq update (one write of the run row), else FOR UPDATE; then the step is written once. If the
-- worker dies after the commit, the claimed step's lease lapses and the sweeper hands it on.
-- The walk applies only to a run that is not held: a held run's settle writes a run.wake and the engine's walk holds
-- it. The settle hands the worker the run's budgets with its steps, as the claim does.
-- History (prisma/migrations, never edited): 20261129080000_step_functions, 20261129090000_claim_effects,
-- 20261130010000_run_budgets, 20261201100000_lifecycle_retry, 20261201121000_one_applier (drops the signature that
-- took the walk's plan and scheduled its steps in SQL); since 2026-12-02 holdfast_rows_insert takes the step's run and
-- organisation and refuses a row that names another (rows_insert.sql).
CREATE OR REPLACE FUNCTION holdfast_step_settle(p_step_id text, p_token integer, p_worker text, p_status text, p_output jsonb, p_error jsonb, p_delay_ms double precision, p_event text, p_event_data jsonb, p_run_seq bigint, p_rows jsonb, p_retry jsonb, p_effect jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  r record;
  s record;
  advance boolean;
  claim jsonb;
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

  -- The run is locked before the step (the engine's and cancel's order). When the worker's walk still applies
  -- (same seq, running, not cancelling), the run's own update is the lock: one write of the run row, not a lock
  -- and then a write.
  advance := false;
  IF p_status <> 'ready' AND p_rows IS NOT NULL THEN
    UPDATE runs SET
      -- seq only (no index holds it: a HOT update); updated_at only when the run ends (its own state changed).
      seq = seq + 1,
      updated_at = CASE WHEN p_rows->'finish'->>'status' IS NULL THEN updated_at ELSE now() END,
      status = COALESCE(p_rows->'finish'->>'status', status),
      error = CASE WHEN jsonb_typeof(p_rows->'finish') = 'object' THEN p_rows->'finish'->'error' ELSE error END,
      finished_at = CASE WHEN p_rows->'finish'->>'status' IS NULL THEN finished_at ELSE now() END
    WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id)
      AND seq = p_run_seq AND status = 'running' AND cancel_requested_at IS NULL
      -- A run held by its paused automation takes no next step here: the engine's walk holds it (run.wake).
      AND held_at IS NULL
    RETURNING id, seq, false AS cancelling, version_id, input, max_steps, expires_at, test INTO r;
    advance := FOUND;
  END IF;
  IF NOT advance THEN
    SELECT id, seq, cancel_requested_at IS NOT NULL AS cancelling, version_id, input, max_steps, expires_at, test INTO r FROM runs
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

  -- A walk that claims its next step for this worker (local dispatch) says so in this row, data.chained {nodeId,
  -- iteration} (the step's id is its run's step at that node and iteration: 48 bytes a step fewer than naming it):
  -- the chained step's claim is this commit's, by this worker, attempt 1, on this lane, so it needs no row of its own
  -- (the timeline's reader shows it as that step's step.claimed: runEventsForRun). A worker
  -- of an earlier release still sends the claim's own step.claimed row in p_rows: then this row says nothing more.
  INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
  VALUES (s.org_id, s.run_id, p_step_id, s.node_id, s.attempt, p_event, s.lane, p_worker,
          CASE WHEN advance AND p_status IN ('done', 'failed') AND jsonb_typeof(p_rows->'claim') = 'object'
                    AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(p_rows->'events', '[]'::jsonb)) e
                                    WHERE e->>'type' = 'step.claimed' AND e->>'stepId' = p_rows->'claim'->>'stepId')
               THEN COALESCE(p_event_data, '{}'::jsonb)
                    || jsonb_build_object('chained', jsonb_build_object('nodeId', p_rows->'claim'->'nodeId', 'iteration', p_rows->'claim'->'iteration'))
               ELSE p_event_data END);

  IF p_status = 'parked' THEN
    -- Waits for a person (p_error says why and which connection resumes it); a run being cancelled goes on to
    -- its cancellation instead.
    IF r.cancelling THEN
      INSERT INTO outbox (org_id, run_id, topic, payload)
      VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'cancel'));
    END IF;
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  IF p_status = 'ready' AND r.cancelling THEN
    -- Nobody will claim the retry of a run being cancelled: the engine finishes the cancellation instead.
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'cancel'));
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  IF p_status = 'ready' THEN
    IF p_retry IS NULL THEN
      RAISE EXCEPTION 'step % goes back to ready but its settle brought no step.ready row (p_retry)', p_step_id;
    END IF;
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    VALUES (s.org_id, s.run_id, p_retry->>'topic', p_retry->'payload', now() + make_interval(secs => p_delay_ms / 1000));
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  IF NOT advance THEN
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'step_settled'));
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  -- The walk's rows as the worker prepared them, in its timeline order (inline nodes, the steps it scheduled, how
  -- the run ended); the run row already carries the end.
  PERFORM holdfast_rows_insert(s.org_id, s.run_id, p_rows);
  claim := p_rows->'claim';
  IF jsonb_typeof(claim) = 'object' THEN
    -- Local dispatch: the step inserted already claimed by this worker (attempt 1 is its fencing token); its effect
    -- key is claimed in the same commit, as a claim would. The run as that step's inline walk will see it (read after
    -- every write above).
    effect := CASE WHEN (claim->>'effect')::boolean
                   THEN holdfast_effect_claim(s.org_id, s.run_id, claim->>'stepId', claim->>'nodeId', (claim->>'iteration')::int,
                                              claim->>'kind', 1, (claim->>'leaseMs')::float8) END;
    claimed := jsonb_build_object(
      'versionId', r.version_id, 'maxSteps', r.max_steps, 'expired', COALESCE(r.expires_at <= now(), false), 'input', r.input,
      'runSeq', r.seq::text, 'effect', effect, 'test', r.test,
      -- The run's steps for that walk, unless the worker said it knows them (claim.runStepsKnown: the steps its claim
      -- saw, its own settled, and this one; run/apply/inline.ts stepsAfterSettle): a read of every step of the run a
      -- chained step saved (holdfast_run_steps).
      'runSteps', CASE WHEN (claim->>'runStepsKnown')::boolean IS TRUE THEN NULL ELSE holdfast_run_steps(s.run_id) END);
  END IF;
  RETURN jsonb_build_object('changed', true, 'advanced', true, 'claimed', claimed);
END;
$function$;
