-- One index fewer on every step (issue 19): steps_open_lane_status_available_at_idx held every open step (ready,
-- running, waiting, parked) by lane, so a step's insert and its claim each wrote an entry there (1.1 B-tree records a
-- step of about fifteen, pg_walinspect). Nothing finds steps by lane any more: claims are by the step's id (from its
-- wake-up: the queue's job or the outbox row a lane worker takes), and every look-up by status or lease (the
-- sweeper's lapsed leases and stale ready steps, the lane counts) is served by steps_open_status_lease_until_idx,
-- which holds the same open steps with status first (parked and waiting steps are found through their own indexes,
-- by connection and by correlation key, or by their run).
--
-- Dropping an index locks its table (ACCESS EXCLUSIVE) for a moment; a lock this migration waits for longer than
-- lock_timeout fails it (try again at a quiet moment) instead of queueing every writer behind it. On a large database,
-- run this first, outside a transaction (docs/operations.md, "Migrations"):
--   DROP INDEX CONCURRENTLY IF EXISTS "steps_open_lane_status_available_at_idx";
SET LOCAL lock_timeout = '10s';
DROP INDEX IF EXISTS "steps_open_lane_status_available_at_idx";
