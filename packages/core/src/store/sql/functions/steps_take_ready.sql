-- First-step dispatch by LISTEN, take and claim in one statement: a lane worker with p_limit free slots takes due
-- step.ready rows of its lane from the outbox (FOR UPDATE SKIP LOCKED, so workers and the relay never take one row
-- twice; marked sent as taken) and claims each row's step for itself (holdfast_step_claim, fenced as any claim).
-- Returns {"taken": rows taken, "claimed": [the claimed steps, as holdfast_step_claim returns them], "more": whether,
-- having taken p_limit rows, it saw another due row of the lane not yet sent (the worker takes again only then: a
-- take that would find nothing is a transaction for nothing)}; a row whose step cannot be claimed (not due yet,
-- leased elsewhere, its run finished or cancelling) is marked sent and left out: the step's own row decides, and the
-- sweeper re-wakes a ready step nobody claimed. The steps are claimed in run order, as batched settles lock runs.
-- p_skip_busy_runs: the caller holds run locks already (a settle batch, holdfast_step_settle_batch, takes after its
-- settles): a row whose run another transaction holds is not waited for but left unsent, for another take or the
-- relay, and counts as "more" (its run's lock would otherwise be taken out of order: two batches could each wait for
-- a run the other settled). Called by store/sql/steps.ts (stepsTakeReady) from run/steps/ready-listener.ts, and by
-- holdfast_step_settle_batch.
-- History (prisma/migrations, never edited): 20261203183000_take_skip_busy_runs (the sixth argument).
CREATE OR REPLACE FUNCTION holdfast_steps_take_ready(p_lane text, p_limit integer, p_worker text, p_lease_ms double precision, p_effect_kinds text[], p_skip_busy_runs boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  o record;
  claimed jsonb;
  steps jsonb := '[]'::jsonb;
  taken integer := 0;
  busy integer := 0;
  more boolean := false;
BEGIN
  FOR o IN
    WITH due AS (
      SELECT id, payload FROM outbox
      WHERE sent_at IS NULL AND available_at <= now() AND topic = 'step.ready' AND payload->>'lane' = p_lane
      ORDER BY available_at, id
      LIMIT p_limit
      FOR UPDATE SKIP LOCKED
    )
    SELECT id, payload FROM due ORDER BY payload->>'runId', payload->>'stepId'
  LOOP
    IF p_skip_busy_runs THEN
      PERFORM 1 FROM runs WHERE id = (SELECT run_id FROM steps WHERE id = o.payload->>'stepId') FOR SHARE SKIP LOCKED;
      IF NOT FOUND THEN
        busy := busy + 1;
        CONTINUE;
      END IF;
    END IF;
    UPDATE outbox SET sent_at = now() WHERE id = o.id;
    taken := taken + 1;
    claimed := holdfast_step_claim(o.payload->>'stepId', p_worker, p_lease_ms, NULL, p_effect_kinds);
    IF claimed IS NOT NULL THEN
      steps := steps || jsonb_build_array(claimed);
    END IF;
  END LOOP;
  IF busy > 0 THEN
    more := true;
  ELSIF taken = p_limit THEN
    -- (This statement sees the rows it marked sent; a row another take has locked but not sent yet counts.)
    more := EXISTS (
      SELECT 1 FROM outbox
      WHERE sent_at IS NULL AND available_at <= now() AND topic = 'step.ready' AND payload->>'lane' = p_lane
    );
  END IF;
  RETURN jsonb_build_object('taken', taken, 'claimed', steps, 'more', more);
END;
$function$;
