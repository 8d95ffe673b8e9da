-- Trigger on steps (AFTER UPDATE OF node_id when it changes: a migration's renamed step): an open step's 'now' or
-- 'held' moves from the old node id to the new one. Test runs count nothing.
-- The change names no run (20261211100000_count_changes_step_rows); collected with its neighbours' when the
-- transaction collects (holdfast_count_change, count_tally_start.sql).
-- History (prisma/migrations, never edited): 20261207105000_journey_count_paths.
CREATE OR REPLACE FUNCTION holdfast_count_step_node() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v text;
BEGIN
  IF NEW.status NOT IN ('ready', 'running', 'waiting', 'parked') THEN
    RETURN NULL;
  END IF;
  SELECT r.version_id INTO v FROM runs r WHERE r.id = NEW.run_id AND NOT r.test;
  IF FOUND THEN
    PERFORM holdfast_count_change(NEW.org_id, v, OLD.node_id, holdfast_count_bucket(NEW.status), NULL);
    PERFORM holdfast_count_change(NEW.org_id, v, NEW.node_id, NULL, holdfast_count_bucket(NEW.status));
  END IF;
  RETURN NULL;
END;
$$;
