-- Trigger on steps (AFTER INSERT, AFTER UPDATE OF status when the bucket changes): the step's run moves from the old
-- bucket to the new one at the step's node, in the transaction that changed the step. Test runs count nothing.
-- A step closed because its run converted (runs.goal_met is set before the walk closes the steps, and a run with
-- goal_met only ever ends converted) counts 'converted', not 'cancelled': nothing went wrong there.
-- The change names no run (20261211100000_count_changes_step_rows), and a settle batch or a set of timers fired sums
-- it with its neighbours' (holdfast_count_change, count_tally_start.sql).
-- History (prisma/migrations, never edited): 20261207100000_journey_counts.
CREATE OR REPLACE FUNCTION holdfast_count_step() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  c record;
BEGIN
  SELECT r.version_id,
         CASE WHEN TG_OP = 'UPDATE' THEN
           CASE WHEN OLD.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(OLD.status) END
         END AS old_bucket,
         CASE WHEN NEW.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(NEW.status) END AS new_bucket
  INTO c
  FROM runs r WHERE r.id = NEW.run_id AND NOT r.test;
  IF FOUND THEN
    PERFORM holdfast_count_change(NEW.org_id, c.version_id, NEW.node_id, c.old_bucket, c.new_bucket);
  END IF;
  RETURN NULL;
END;
$$;
