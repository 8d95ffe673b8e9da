-- The run's steps as the walk sees them (walk/walk.ts StepState), for a worker's inline walk after its step.
-- History (prisma/migrations, never edited): 20261129090000_claim_effects.
CREATE OR REPLACE FUNCTION holdfast_run_steps(p_run_id text) RETURNS jsonb AS $$
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'id', o.id, 'nodeId', o.node_id, 'iteration', o.iteration, 'status', o.status,
           'output', o.output, 'error', o.error, 'advanced', o.advanced_at IS NOT NULL,
           'leased', o.status = 'running' AND o.lease_until >= now()) ORDER BY o.created_at, o.id), '[]'::jsonb)
  FROM steps o WHERE o.run_id = p_run_id;
$$ LANGUAGE sql STABLE;
