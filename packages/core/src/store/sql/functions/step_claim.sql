-- Claims a step for one attempt: the fenced UPDATE (no live lease elsewhere, due, not settled, run neither finished
-- nor cancelling nor past its age budget), its timeline row (and step.lease_expired before it when the claim takes
-- over an attempt whose lease lapsed), the outbox row's fulfilment (p_outbox_id) and, for an
-- effect kind (p_effect_kinds), the effect's claim (holdfast_effect_claim). Returns null when the step cannot be
-- claimed, else the step, its run's version, input, seq and budgets and the run's steps (holdfast_run_steps), so a
-- worker's own walk (local dispatch) sees what the engine's would. PL/pgSQL keeps its plans per connection: the
-- hottest statement is planned once. A claim takes the run FOR SHARE: a cancel that locked the run first is seen
-- here; one that comes after sees this step running with a live lease and waits for its settle instead of cancelling
-- it under the worker. Called by store/sql/steps.ts.
-- History (prisma/migrations, never edited): 20261129080000_step_functions, 20261129090000_claim_effects, 20261130010000_run_budgets,
-- 20261205120000_test_runs (whether the run is a test: its effects are simulated, run/connectors/simulate.ts).
CREATE OR REPLACE FUNCTION holdfast_step_claim(p_step_id text, p_worker text, p_lease_ms double precision, p_outbox_id bigint, p_effect_kinds text[])
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  s record;
  r record;
  seen jsonb;
  effect jsonb;
BEGIN
  -- FOR SHARE: a cancel that locked the run first is seen here (we wait for it); one that comes after sees this
  -- step running with a live lease and waits for its settle instead of cancelling it under the worker.
  SELECT id, version_id, input, seq, max_steps, expires_at, test INTO r FROM runs
  WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id)
    AND status = 'running' AND cancel_requested_at IS NULL
    -- A run past its age budget performs nothing more: the sweeper wakes it and the walk stops it.
    AND (expires_at IS NULL OR expires_at > now())
  FOR SHARE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  FOR pass IN 1..2 LOOP
    UPDATE steps SET status = 'running', owner = p_worker, attempt = attempt + 1,
                     lease_until = now() + make_interval(secs => p_lease_ms / 1000), updated_at = now()
    WHERE id = p_step_id AND status = 'ready' AND available_at <= now()
    RETURNING id, org_id, run_id, node_id, iteration, kind, lane, attempt, max_attempts, deferrals INTO s;
    EXIT WHEN FOUND;
    IF pass = 2 THEN
      RETURN NULL;
    END IF;
    -- A takeover: the step's last attempt still runs under a lease that lapsed (its worker died or hung) and the
    -- sweeper has not handed it on yet. The timeline says so here, as the sweeper's rescue does
    -- (store/sql/steps-sweep.ts), so every attempt after the first has its reason.
    UPDATE steps SET status = 'running', owner = p_worker, attempt = attempt + 1,
                     lease_until = now() + make_interval(secs => p_lease_ms / 1000), updated_at = now()
    WHERE id = p_step_id AND status = 'running' AND lease_until < now() AND available_at <= now()
    RETURNING id, org_id, run_id, node_id, iteration, kind, lane, attempt, max_attempts, deferrals INTO s;
    IF FOUND THEN
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker)
      VALUES (s.org_id, s.run_id, s.id, s.node_id, s.attempt - 1, 'step.lease_expired', s.lane, p_worker);
      EXIT;
    END IF;
    -- Not running under a lapsed lease either. The sweeper's rescue may have made the step ready while the takeover
    -- waited for its row (the first look saw it running, before that commit): the ready claim once more.
  END LOOP;
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
    'versionId', r.version_id, 'maxSteps', r.max_steps, 'expired', COALESCE(r.expires_at <= now(), false), 'input', r.input, 'runSeq', r.seq::text, 'runSteps', seen, 'effect', effect,
    'test', r.test);
END;
$function$;
