-- Trigger on runs (AFTER INSERT, AFTER UPDATE OF status when it changes): a run started, then ended as its status
-- says, counted at node '' of its version. Test runs count nothing. The status trigger stands aside while
-- holdfast.count_run_end_by_statement is on: the set of timers fired (timers_fire_walk.sql) counts the runs it ends
-- itself (20261216100000_count_run_end_by_statement).
-- History (prisma/migrations, never edited): 20261207100000_journey_counts.
CREATE OR REPLACE FUNCTION holdfast_count_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT NEW.test THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (NEW.org_id, NEW.version_id, NEW.id, '', NULL, CASE WHEN TG_OP = 'INSERT' THEN 'started' ELSE NEW.status END);
  END IF;
  RETURN NULL;
END;
$$;
