-- Trigger on steps (AFTER INSERT, once per statement; its rows in the transition table `inserted`): each new step's run
-- enters the step's bucket at its node. The statement's changes are summed per organisation, version, node and bucket
-- (n runs) and handed to holdfast_count_tally_add: kept for the batch's flush while the transaction collects (a settle
-- batch, a set of timers fired: count_tally_start.sql), else count_changes rows in the transaction that wrote the steps.
-- Test runs count nothing. A step closed because its run converted (runs.goal_met is set before the walk closes the
-- steps, and a run with goal_met only ever ends converted) counts 'converted', not 'cancelled': nothing went wrong there.
-- History: new in 20261215100000_count_steps_as_sets (issue 47, CPU a step), in place of holdfast_count_step as a row
-- trigger.
CREATE OR REPLACE FUNCTION holdfast_count_steps_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- In key order, as the fold adds them.
  PERFORM holdfast_count_tally_add(c.org_id, c.version_id, c.node_id, NULL, c.bucket, c.n)
  FROM (SELECT s.org_id, r.version_id, s.node_id,
               CASE WHEN s.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(s.status) END AS bucket,
               count(*)::integer AS n
        FROM inserted s JOIN runs r ON r.id = s.run_id AND NOT r.test
        GROUP BY 1, 2, 3, 4
        ORDER BY 1, 2, 3, 4) c;
  RETURN NULL;
END;
$$;
