-- count_changes and run_split_paths are append-only: inserted in the transaction of a change, deleted by the fold.
-- The default privileges of 20261201050000_tenancy gave both roles UPDATE on every new table, which the narrower
-- GRANTs of 20261207100000_journey_counts and 20261207105000_journey_count_paths did not take back. The web only
-- inserts (a click, an open, a reply); the worker role keeps UPDATE because the fold locks the rows it takes
-- (SELECT ... FOR UPDATE SKIP LOCKED needs it), and no statement of the product updates either table.
REVOKE UPDATE ON TABLE "count_changes", "run_split_paths" FROM holdfast_web;
