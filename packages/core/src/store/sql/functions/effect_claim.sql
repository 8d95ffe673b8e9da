-- The effect ledger's claim-or-read for one attempt of an effect step: key run/node/iteration (never the attempt),
-- owner step:attempt, the step's lease. Returns {"claimed": true} or {"claimed": false, "row": {...}} (what is there).
-- The key is looked up first and inserted plainly when absent, not by INSERT ... ON CONFLICT: a speculative insertion
-- writes a confirmation record to the WAL beside the row, on the claim of every effect step. Two claims of one key
-- never meet here (the key is the step's own run/node/iteration, and the step's fenced claim update serialises its
-- attempts); if two ever did, the second's insert fails on the key and its claim with it: nothing performed twice.
-- History (prisma/migrations, never edited): 20261129090000_claim_effects, 20261210120000_wal_step (no ON CONFLICT).
CREATE OR REPLACE FUNCTION holdfast_effect_claim(p_org_id text, p_run_id text, p_step_id text, p_node_id text, p_iteration int,
                                      p_kind text, p_attempt int, p_lease_ms float8)
RETURNS jsonb AS $$
DECLARE
  eff_key text := p_run_id || '/' || p_node_id || '/' || p_iteration;
  found_row jsonb;
BEGIN
  SELECT jsonb_build_object(
           'key', e.key, 'status', e.status, 'owner', e.owner, 'attempts', e.attempts,
           'providerIdempotent', e.provider_idempotent, 'result', e.result, 'error', e.error,
           'firstAttemptAt', e.first_attempt_at,
           'leaseLeftMs', GREATEST(0, EXTRACT(EPOCH FROM e.lease_until - now()) * 1000)::float8)
    INTO found_row FROM effects e WHERE e.org_id = p_org_id AND e.key = eff_key;
  IF found_row IS NOT NULL THEN
    RETURN jsonb_build_object('claimed', false, 'row', found_row);
  END IF;
  INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until)
  VALUES (p_org_id, p_run_id, p_step_id, eff_key, p_kind, 'in_flight', p_step_id || ':' || p_attempt,
          now() + make_interval(secs => p_lease_ms / 1000));
  RETURN jsonb_build_object('claimed', true);
END;
$$ LANGUAGE plpgsql;
