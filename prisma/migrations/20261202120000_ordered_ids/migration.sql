-- Time-ordered ids for runs, steps and timers (issue 19, cost as data grows): the defaults for rows inserted without an
-- id (holdfast_ordered_id, sql/functions/ordered_id.sql), in the layout the engine gives the run and step ids it makes
-- (apply/rows.ts): a new row's id sorts after the ids made before it, so inserts land on the right edge of each index
-- keyed by it instead of on a random page. Existing ids stay as they are (random). Keyset paging by id (Stop all runs)
-- is bounded by the time it began, as new ids always sort last. The function is created here because the defaults
-- need it; its file (applied after every migrate) is its live body.
--
-- A column default changes under an ACCESS EXCLUSIVE lock held for an instant (no rewrite); the three are taken
-- first, in the engine's order (the run, then its steps, then their timers).
SET LOCAL lock_timeout = '10s';
LOCK TABLE "runs", "steps", "timers" IN ACCESS EXCLUSIVE MODE;
CREATE OR REPLACE FUNCTION holdfast_ordered_id(prefix text)
RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT prefix || encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')
$$;
ALTER TABLE "runs" ALTER COLUMN "id" SET DEFAULT holdfast_ordered_id('run_');
ALTER TABLE "steps" ALTER COLUMN "id" SET DEFAULT holdfast_ordered_id('stp_');
ALTER TABLE "timers" ALTER COLUMN "id" SET DEFAULT holdfast_ordered_id('tmr_');
