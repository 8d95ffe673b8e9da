-- Trigger on steps (AFTER UPDATE, once per statement; its rows in the transition tables `before_rows` and
-- `after_rows`): a step whose bucket changed moves its run from the old bucket to the new one at the step's node. A
-- bucket changes exactly when the status does and not between two of ready, running and waiting (all 'now':
-- holdfast_count_bucket; packages/core/test/count-trigger-condition.test.ts checks the two tests agree). The
-- statement's changes are summed per organisation, version, node and move (n runs) and handed to
-- holdfast_count_tally_add, as count_steps_inserted.sql says. Test runs count nothing; a step closed because its run
-- converted counts 'converted'. Every UPDATE of steps fires it (a trigger with transition tables names no columns): one
-- whose steps were and stay 'now' (a claim, a lease, the walk's mark) is passed over at once.
-- A step's old and new rows are paired by key: both tables hold the same steps, so sorted by (id, org_id) their n-th
-- rows are one step's. Not a join of the two tables: PL/pgSQL keeps a statement's plan, made with the row counts of the
-- first statement that fired it, and a nested loop chosen for one row took 15 s for an update of 20,000 steps.
-- History: new in 20261215100000_count_steps_as_sets (issue 47, CPU a step), in place of holdfast_count_step as a row
-- trigger.
CREATE OR REPLACE FUNCTION holdfast_count_steps_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM after_rows WHERE status NOT IN ('ready', 'running', 'waiting'))
     AND NOT EXISTS (SELECT 1 FROM before_rows WHERE status NOT IN ('ready', 'running', 'waiting')) THEN
    RETURN NULL;
  END IF;
  -- In key order, as the fold adds them.
  PERFORM holdfast_count_tally_add(c.org_id, c.version_id, c.node_id, c.from_bucket, c.to_bucket, c.n)
  FROM (SELECT p.org_id, r.version_id, p.node_id,
               CASE WHEN p.old_status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(p.old_status) END AS from_bucket,
               CASE WHEN p.new_status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(p.new_status) END AS to_bucket,
               count(*)::integer AS n
        FROM unnest((SELECT array_agg(o.status ORDER BY o.id, o.org_id) FROM before_rows o),
                    (SELECT array_agg(s.status ORDER BY s.id, s.org_id) FROM after_rows s),
                    (SELECT array_agg(s.org_id ORDER BY s.id, s.org_id) FROM after_rows s),
                    (SELECT array_agg(s.run_id ORDER BY s.id, s.org_id) FROM after_rows s),
                    (SELECT array_agg(s.node_id ORDER BY s.id, s.org_id) FROM after_rows s)) AS p(old_status, new_status, org_id, run_id, node_id)
        JOIN runs r ON r.id = p.run_id AND NOT r.test
        WHERE p.old_status IS DISTINCT FROM p.new_status
          AND NOT (p.old_status IN ('ready', 'running', 'waiting') AND p.new_status IN ('ready', 'running', 'waiting'))
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5) c;
  RETURN NULL;
END;
$$;
