-- The run's steps as the walk sees them (decide/walk/walk.ts StepState), for a worker's inline walk after its step.
-- PL/pgSQL, not SQL: a SQL function called from PL/pgSQL is not inlined, and its body was parsed and planned again on
-- every call (a tenth of the lane worker's database time at peak); PL/pgSQL keeps the plan for the connection.
-- Its one plan is the generic one (plan_cache_mode): once the table has statistics, a plan made for one run's id looks
-- cheaper than the generic plan (fewer rows than the average run), so the default mode made a custom plan on every call,
-- planning again each time (14,000 plans in 15,000 calls; 0.15 ms of planning against 0.09 ms of execution). Every
-- plan is the same index scan of steps (run_id, node_id, iteration), with sequential scans off: a plan made while steps
-- was small (a new deployment's first seconds) read the whole table at every call for as long as the connection lived.
-- History (prisma/migrations, never edited): 20261129090000_claim_effects (LANGUAGE sql until 20261202).
CREATE OR REPLACE FUNCTION holdfast_run_steps(p_run_id text) RETURNS jsonb AS $$
BEGIN
  RETURN (
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
             'id', o.id, 'nodeId', o.node_id, 'iteration', o.iteration, 'status', o.status,
             'output', o.output, 'error', o.error, 'advanced', o.advanced_at IS NOT NULL,
             'leased', o.status = 'running' AND o.lease_until >= now()) ORDER BY o.created_at, o.id), '[]'::jsonb)
    FROM steps o WHERE o.run_id = p_run_id);
END;
$$ LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off;
