-- journey counts' split paths (issue 43): which path each run took at each A/B split it passed, kept for good, so a
-- reply, a click or a conversion that comes after the run's timeline was removed (timeline retention) is still
-- counted on the right path: the fold (run/sweeper/services/count-fold.ts) writes a row when it folds the edge the
-- walk took out of a split, and counts a run-level 'outcome:replied' | 'outcome:clicked' | 'converted' change at each
-- row of its run (and at each split edge of its run not folded yet) as 'path:<path>:<outcome>'. Test runs write
-- no edges, so no rows.
CREATE TABLE "run_split_paths" (
  "org_id" TEXT NOT NULL,
  "run_id" TEXT NOT NULL,
  "version_id" TEXT NOT NULL,
  "node_id" TEXT NOT NULL,
  "path" TEXT NOT NULL,
  CONSTRAINT "run_split_paths_pkey" PRIMARY KEY ("run_id", "version_id", "node_id")
);
SELECT holdfast_tenant_table('run_split_paths');
GRANT SELECT, INSERT, DELETE ON TABLE "run_split_paths" TO holdfast_web, holdfast_worker;

-- A run moved to another version (run/run-migrations) takes its place in the counts with it: it leaves the old
-- version ('moved_out', an end for the old version's runs in flight) and enters the new one ('moved_in'), and each of
-- its open steps' 'now' or 'held' moves from the old version's node to the new one's. What it did on the old version
-- (passed, failed, its edges) stays there: that is where it happened. A step renamed by a migration's mapping moves
-- its open count from the old node id to the new one. Test runs count nothing. Live bodies:
-- packages/core/src/store/sql/functions/count_run_version.sql and count_step_node.sql.
CREATE OR REPLACE FUNCTION holdfast_count_run_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT NEW.test THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (NEW.org_id, OLD.version_id, NEW.id, '', NULL, 'moved_out'), (NEW.org_id, NEW.version_id, NEW.id, '', NULL, 'moved_in');
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT s.org_id, m.version_id, s.run_id, s.node_id, m.from_bucket, m.to_bucket
    FROM steps s
    CROSS JOIN LATERAL (VALUES (OLD.version_id, holdfast_count_bucket(s.status), NULL),
                               (NEW.version_id, NULL, holdfast_count_bucket(s.status))) AS m(version_id, from_bucket, to_bucket)
    WHERE s.run_id = NEW.id AND s.status IN ('ready', 'running', 'waiting', 'parked');
  END IF;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION holdfast_count_step_node() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
  SELECT NEW.org_id, r.version_id, NEW.run_id, m.node_id, m.from_bucket, m.to_bucket
  FROM runs r
  CROSS JOIN LATERAL (VALUES (OLD.node_id, holdfast_count_bucket(NEW.status), NULL),
                             (NEW.node_id, NULL, holdfast_count_bucket(NEW.status))) AS m(node_id, from_bucket, to_bucket)
  WHERE r.id = NEW.run_id AND NOT r.test AND NEW.status IN ('ready', 'running', 'waiting', 'parked');
  RETURN NULL;
END;
$$;

CREATE TRIGGER "runs_count_version" AFTER UPDATE OF "version_id" ON "runs" FOR EACH ROW
  WHEN (OLD.version_id IS DISTINCT FROM NEW.version_id) EXECUTE FUNCTION holdfast_count_run_version();
CREATE TRIGGER "steps_count_node" AFTER UPDATE OF "node_id" ON "steps" FOR EACH ROW
  WHEN (OLD.node_id IS DISTINCT FROM NEW.node_id) EXECUTE FUNCTION holdfast_count_step_node();
