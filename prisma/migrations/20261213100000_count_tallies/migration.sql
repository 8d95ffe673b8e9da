-- Journey counts' step changes, summed a transaction at a time (issue 47, WAL a step). A settle batch
-- (holdfast_step_settle_batch) and a set of timers fired (holdfast_timers_fire_walk) change many steps in one
-- transaction; each change used to be its own count_changes row (inserted, then deleted by the fold: two WAL records).
-- Called with p_tally, they collect their steps' changes (holdfast_count_step, holdfast_count_step_node) in the
-- transaction and write them here summed: one row per organisation, version, node and move, with how many runs made it.
-- The fold (store/sql/count-changes.ts) adds these to journey_counts as it adds count_changes, and a read sums both.
-- A previous release never reads this table: its processes call holdfast_step_settle_many (kept: the batch
-- without a tally), so their changes stay in count_changes; during a rolling upgrade a previous release's web shows the changes of this
-- release's workers once this release's sweeper has folded them (its next pass, every 2 s by default).
-- No key: the fold deletes what it adds. No run: a step's change names none (20261211100000_count_changes_step_rows).
CREATE TABLE "count_tallies" (
  "org_id" TEXT NOT NULL,
  "version_id" TEXT NOT NULL,
  "node_id" TEXT NOT NULL DEFAULT '',
  "from_bucket" TEXT,
  "to_bucket" TEXT,
  "n" INTEGER NOT NULL,
  "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "count_tallies_bucket_check" CHECK ("from_bucket" IS NOT NULL OR "to_bucket" IS NOT NULL),
  CONSTRAINT "count_tallies_n_check" CHECK ("n" > 0)
);
SELECT holdfast_tenant_table('count_tallies');
-- The web only reads them (journey counts); the workers write them and the sweeper folds them (the schema's default
-- privileges would give both roles every one).
REVOKE ALL ON TABLE "count_tallies" FROM holdfast_web, holdfast_worker;
GRANT SELECT ON TABLE "count_tallies" TO holdfast_web;
GRANT SELECT, INSERT, DELETE ON TABLE "count_tallies" TO holdfast_worker;
