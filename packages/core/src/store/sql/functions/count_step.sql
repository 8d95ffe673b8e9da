-- Trigger on steps (AFTER INSERT, AFTER UPDATE OF status when the bucket changes): the step's run moves from the old
-- bucket to the new one at the step's node, in the transaction that changed the step. Test runs count nothing.
-- A step closed because its run converted (runs.goal_met is set before the walk closes the steps, and a run with
-- goal_met only ever ends converted) counts 'converted', not 'cancelled': nothing went wrong there.
-- The change names no run (NULL run_id): the fold needs a run only for edges and outcomes (20261211100000_count_changes_step_rows).
-- History (prisma/migrations, never edited): 20261207100000_journey_counts.
CREATE OR REPLACE FUNCTION holdfast_count_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
  SELECT NEW.org_id, r.version_id, NULL, NEW.node_id,
         CASE WHEN TG_OP = 'UPDATE' THEN b.old_bucket END, b.new_bucket
  FROM runs r
  CROSS JOIN LATERAL (
    SELECT CASE WHEN OLD.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(OLD.status) END,
           CASE WHEN NEW.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(NEW.status) END
  ) AS b(old_bucket, new_bucket)
  WHERE r.id = NEW.run_id AND NOT r.test;
  RETURN NULL;
END;
$$;
