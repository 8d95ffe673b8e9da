-- Trigger on steps (AFTER UPDATE, once per statement; its rows in the transition tables `before_rows` and
-- `after_rows`): a step whose bucket changed moves its run from the old bucket to the new one at the step's node. A
-- bucket changes exactly when the status does and not between two of ready, running and waiting (all 'now':
-- holdfast_count_bucket; packages/core/test/count-trigger-condition.test.ts checks the two tests agree). The
-- statement's changes are summed per organisation, version, node and move (n runs), written or kept by
-- holdfast_count_tally_add as count_steps_inserted.sql says. Test runs count nothing; a step closed because its run
-- converted counts 'converted'. Every UPDATE of steps fires it (a trigger with transition tables names no columns); an
-- update that moves no bucket (a claim, a lease, the walk's mark) finds nothing to write.
-- History: new in 20261215100000_count_steps_as_sets (issue 47, CPU a step), in place of holdfast_count_step as a row
-- trigger.
CREATE OR REPLACE FUNCTION holdfast_count_steps_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- In key order, as the fold adds them.
  PERFORM holdfast_count_tally_add(c.org_id, c.version_id, c.node_id, c.from_bucket, c.to_bucket, c.n)
  FROM (SELECT n.org_id, r.version_id, n.node_id,
               CASE WHEN o.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(o.status) END AS from_bucket,
               CASE WHEN n.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(n.status) END AS to_bucket,
               count(*)::integer AS n
        FROM before_rows o
        JOIN after_rows n ON n.id = o.id AND n.org_id = o.org_id
        JOIN runs r ON r.id = n.run_id AND NOT r.test
        WHERE o.status IS DISTINCT FROM n.status
          AND NOT (o.status IN ('ready', 'running', 'waiting') AND n.status IN ('ready', 'running', 'waiting'))
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5) c;
  RETURN NULL;
END;
$$;
