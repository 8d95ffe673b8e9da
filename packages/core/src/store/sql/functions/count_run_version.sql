-- Trigger on runs (AFTER UPDATE OF version_id when it changes: a version migration): the run leaves the old version's
-- counts ('moved_out') and enters the new one's ('moved_in'), its open steps' 'now' or 'held' with it; what it did on
-- the old version stays there. Test runs count nothing.
-- Its steps' changes name no run (20261211100000_count_changes_step_rows).
-- History (prisma/migrations, never edited): 20261207105000_journey_count_paths.
CREATE OR REPLACE FUNCTION holdfast_count_run_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT NEW.test THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (NEW.org_id, OLD.version_id, NEW.id, '', NULL, 'moved_out'), (NEW.org_id, NEW.version_id, NEW.id, '', NULL, 'moved_in');
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT s.org_id, m.version_id, NULL, s.node_id, m.from_bucket, m.to_bucket
    FROM steps s
    CROSS JOIN LATERAL (VALUES (OLD.version_id, holdfast_count_bucket(s.status), NULL),
                               (NEW.version_id, NULL, holdfast_count_bucket(s.status))) AS m(version_id, from_bucket, to_bucket)
    WHERE s.run_id = NEW.id AND s.status IN ('ready', 'running', 'waiting', 'parked');
  END IF;
  RETURN NULL;
END;
$$;
