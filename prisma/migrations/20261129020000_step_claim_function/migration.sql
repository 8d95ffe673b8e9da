-- The claim as a function: PL/pgSQL keeps its plans per connection, so the hottest statement is planned once
-- instead of on every call (the same fenced UPDATE, timeline row and outbox fulfilment as before).
-- Returns null when the step cannot be claimed (live lease elsewhere, not due, settled, run finished or cancelling).
CREATE FUNCTION holdfast_step_claim(p_step_id text, p_worker text, p_lease_ms float8, p_outbox_id bigint)
RETURNS jsonb AS $$
DECLARE
  s record;
  r record;
  seen jsonb;
BEGIN
  SELECT id, version_id, input, seq INTO r FROM runs
  WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id)
    AND status = 'running' AND cancel_requested_at IS NULL;
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
