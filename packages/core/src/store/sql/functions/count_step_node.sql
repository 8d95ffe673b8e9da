-- Trigger on steps (AFTER UPDATE OF node_id when it changes: a migration's renamed step): an open step's 'now' or
-- 'held' moves from the old node id to the new one. Test runs count nothing.
-- The change names no run (20261211100000_count_changes_step_rows).
-- History (prisma/migrations, never edited): 20261207105000_journey_count_paths.
CREATE OR REPLACE FUNCTION holdfast_count_step_node() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
  SELECT NEW.org_id, r.version_id, NULL, m.node_id, m.from_bucket, m.to_bucket
  FROM runs r
  CROSS JOIN LATERAL (VALUES (OLD.node_id, holdfast_count_bucket(NEW.status), NULL),
                             (NEW.node_id, NULL, holdfast_count_bucket(NEW.status))) AS m(node_id, from_bucket, to_bucket)
  WHERE r.id = NEW.run_id AND NOT r.test AND NEW.status IN ('ready', 'running', 'waiting', 'parked');
  RETURN NULL;
END;
$$;
