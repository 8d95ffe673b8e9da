-- Less WAL an effect step (issue 47), measured by record type and relation with pg_walinspect over a `pnpm bench` row
-- (docs/performance.md, "Where a step's WAL goes").
SET LOCAL lock_timeout = '10s';

-- holdfast_effect_claim: the key looked up, then inserted plainly, instead of INSERT ... ON CONFLICT DO NOTHING (a
-- speculative insertion logs a confirmation record beside the row on every effect step's claim). The function file
-- (packages/core/src/store/sql/functions/effect_claim.sql) says why two claims of one key never meet there.
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

-- Last: the key and index drops lock runs and effects exclusively (every claim and settle waits) from here to the
-- commit. Both locks are taken first, in the order the engine's statements take them (the run, then its effects), so
-- this queues behind the transactions in flight instead of deadlocking with one of them halfway.
LOCK TABLE "runs", "effects" IN ACCESS EXCLUSIVE MODE;

-- effects -> runs (org_id, run_id): each claim's insert of an effect checked its run with a FOR KEY SHARE lock, a WAL
-- record on the run row at every effect step (the run row the settle had just written is a new version, unlocked).
-- The key is kept by its writers, as the timeline's and the steps' are (20261202110000_append_only_keys): an effect
-- is inserted by holdfast_effect_claim, in the statement that holds its step and run, with their organisation and run;
-- by the ledger's claim-or-read (store/sql/effects.ts) for a step attempt the caller holds; and by a restore's carry
-- only for runs the restored database has (run/restore/reconcile.ts). Runs are never deleted, so its ON DELETE
-- CASCADE never ran; row-level security scopes effects by their own org_id.
-- contract: effects_run_id_fkey
ALTER TABLE "effects" DROP CONSTRAINT IF EXISTS "effects_run_id_fkey";

-- effects (lease_until) WHERE status = 'in_flight': its key and its condition name the two columns every settle of an
-- effect changes (status, lease_until), so no settle's update of its effect could be HOT: each wrote a new version
-- with an entry in every index of the table (the key and the run's). Without it, a settle's update leaves the indexes
-- alone while the page has room (fillfactor 85, 20261209100000_wal_a_step). Its one reader was the doctor's
-- effects_past_lease check (store/sql/checks.ts, also counted by /api/health), which now reads the table whole, as
-- the health page's effect figures (effectsFigures, status <> 'settled') already did. The previous release's
-- processes read through it only for speed: dropping it breaks none of them.
-- speed only: effects_unsettled_idx
DROP INDEX IF EXISTS "effects_unsettled_idx";
