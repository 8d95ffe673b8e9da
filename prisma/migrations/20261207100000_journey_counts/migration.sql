-- journey counts (issue 43): how many runs are at each step now, passed through it, failed or are held there, took
-- each edge, and what became of the emails a step sent, per version and per UTC day, exact and read in O(steps).
--   count_changes: append-only, written in the transaction that makes the change (the triggers below for steps and
--   runs; the walk's edges and the email outcomes by their writers), so a change and its count commit or roll back
--   together. A row moves one run out of from_bucket and into to_bucket (either may be null) at one node of one
--   version ('' is the run itself). Test runs write none.
--   journey_counts: the changes folded (summed per version, node, bucket and UTC day of the change) by the sweeper;
--   the fold deletes the changes it adds in the same statement, so a change is counted exactly once, and a read sums
--   the folded counts and the changes not yet folded in one statement (one snapshot): exact at every instant.
--   Buckets a run is in for a while ('now', 'held') are summed over all days (in minus out); the rest count events
--   and are summed over the chosen window's days.
-- Live bodies of the trigger functions: packages/core/src/store/sql/functions/count_step.sql and count_run.sql.
CREATE TABLE "count_changes" (
  "org_id" TEXT NOT NULL,
  "version_id" TEXT NOT NULL,
  "run_id" TEXT NOT NULL,
  "node_id" TEXT NOT NULL DEFAULT '',
  "from_bucket" TEXT,
  "to_bucket" TEXT,
  "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "count_changes_bucket_check" CHECK ("from_bucket" IS NOT NULL OR "to_bucket" IS NOT NULL)
);
CREATE INDEX "count_changes_version_idx" ON "count_changes" ("version_id");
SELECT holdfast_tenant_table('count_changes');
GRANT SELECT, INSERT, DELETE ON TABLE "count_changes" TO holdfast_web, holdfast_worker;

CREATE TABLE "journey_counts" (
  "org_id" TEXT NOT NULL,
  "automation_id" TEXT NOT NULL,
  "version_id" TEXT NOT NULL,
  "node_id" TEXT NOT NULL,
  "bucket" TEXT NOT NULL,
  "day" DATE NOT NULL,
  "n" BIGINT NOT NULL,
  CONSTRAINT "journey_counts_pkey" PRIMARY KEY ("version_id", "node_id", "bucket", "day")
);
CREATE INDEX "journey_counts_automation_idx" ON "journey_counts" ("org_id", "automation_id");
SELECT holdfast_tenant_table('journey_counts');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "journey_counts" TO holdfast_web, holdfast_worker;

-- A step's status as a count bucket: ready, running and waiting are all "now" (a claim moves no count).
CREATE OR REPLACE FUNCTION holdfast_count_bucket(p_status text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_status WHEN 'ready' THEN 'now' WHEN 'running' THEN 'now' WHEN 'waiting' THEN 'now'
                       WHEN 'parked' THEN 'held' WHEN 'done' THEN 'passed' ELSE p_status END
$$;

CREATE OR REPLACE FUNCTION holdfast_count_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
  SELECT NEW.org_id, r.version_id, NEW.run_id, NEW.node_id,
         CASE WHEN TG_OP = 'UPDATE' THEN holdfast_count_bucket(OLD.status) END, holdfast_count_bucket(NEW.status)
  FROM runs r WHERE r.id = NEW.run_id AND NOT r.test;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION holdfast_count_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT NEW.test THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (NEW.org_id, NEW.version_id, NEW.id, '', NULL, CASE WHEN TG_OP = 'INSERT' THEN 'started' ELSE NEW.status END);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "steps_count_insert" AFTER INSERT ON "steps" FOR EACH ROW EXECUTE FUNCTION holdfast_count_step();
CREATE TRIGGER "steps_count_status" AFTER UPDATE OF "status" ON "steps" FOR EACH ROW
  WHEN (holdfast_count_bucket(OLD.status) IS DISTINCT FROM holdfast_count_bucket(NEW.status)) EXECUTE FUNCTION holdfast_count_step();
CREATE TRIGGER "runs_count_insert" AFTER INSERT ON "runs" FOR EACH ROW EXECUTE FUNCTION holdfast_count_run();
CREATE TRIGGER "runs_count_status" AFTER UPDATE OF "status" ON "runs" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION holdfast_count_run();
