-- steps: one key instead of two (issue 47, WAL a step). The step was keyed twice: (id), the primary key every
-- statement finds a step by, and (org_id, id), which only the foreign keys of approvals, signals and timers used
-- (a key to a step of the row's own organisation). Every step inserted, claimed and settled wrote an entry in both
-- (the claim and the settle change status, so neither update is HOT). One key (id, org_id) serves both: a look-up by
-- id reads its leading column, and PostgreSQL matches a foreign key's (org_id, id) to a unique index on the same
-- columns in any order. About 310 bytes of WAL fewer a step, and one index entry fewer at each write.
-- What the key no longer says: that an id is unique across organisations alone. Step ids are made by the engine only
-- (UUID version 7, 74 random bits a millisecond: run/apply/rows.ts, holdfast_ordered_id), never taken from outside;
-- a restore's carry inserts rows of the same database (run/restore/), whose id and organisation come together.
--
-- One transaction. On a large existing database, build the key's new index first (then this migration uses it):
--   CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "steps_id_org_id_key" ON "steps" ("id", "org_id");
-- Dropping and adding the foreign keys locks steps and the three tables exclusively for a moment. The engine takes
-- them in both orders (a settle writes a step, then its timer; a timer's firing writes the timer, then its step), so
-- a migration holding one while it waits for another would deadlock with it. The four locks are taken together or
-- not at all: each try waits at most 50 ms a table (well under deadlock_timeout), gives back what it took, and tries
-- again a moment later, for up to 10 s (then it fails: run it again at a quieter moment, or with the lane workers
-- stopped). The keys come back NOT VALID (new rows are checked at once); the next migration validates the existing
-- rows without blocking writes (20261212100100_steps_keys_validate).
-- contract: approvals_step_fkey, signals_step_fkey, timers_step_id_fkey, steps_org_id_key, steps_pkey
-- reviewed do-block: the first takes the four locks (nothing else); the second refuses to go on unless steps_id_org_id_key is a valid unique index of steps (id, org_id). Neither writes.
DO $$
DECLARE
  deadline timestamptz := clock_timestamp() + interval '10 seconds';
BEGIN
  LOOP
    BEGIN
      SET LOCAL lock_timeout = '50ms';
      LOCK TABLE "steps", "approvals", "signals", "timers" IN ACCESS EXCLUSIVE MODE;
      EXIT;
    EXCEPTION WHEN lock_not_available THEN
      IF clock_timestamp() > deadline THEN
        RAISE EXCEPTION 'steps, approvals, signals and timers stayed busy for 10 s (the engine''s writes, or an autovacuum of one of them): run holdfast migrate again at a quieter moment, or with the lane workers stopped';
      END IF;
      PERFORM pg_sleep(0.02 + random() * 0.05);
    END;
  END LOOP;
END $$;
SET LOCAL lock_timeout = '10s';
CREATE UNIQUE INDEX IF NOT EXISTS "steps_id_org_id_key" ON "steps" ("id", "org_id");
DO $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_index i
    WHERE i.indexrelid = to_regclass('steps_id_org_id_key') AND i.indrelid = 'steps'::regclass
      AND i.indisvalid AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL AND i.indnatts = 2
      AND i.indkey[0] = (SELECT attnum FROM pg_attribute WHERE attrelid = 'steps'::regclass AND attname = 'id')
      AND i.indkey[1] = (SELECT attnum FROM pg_attribute WHERE attrelid = 'steps'::regclass AND attname = 'org_id')) THEN
    RAISE EXCEPTION 'index steps_id_org_id_key is not a valid unique index of steps (id, org_id) (a CREATE INDEX CONCURRENTLY that did not finish, or one made otherwise): DROP INDEX it and build it again with the line this migration gives, then migrate';
  END IF;
END $$;
ALTER TABLE "approvals" DROP CONSTRAINT "approvals_step_fkey";
ALTER TABLE "signals" DROP CONSTRAINT "signals_step_fkey";
ALTER TABLE "timers" DROP CONSTRAINT "timers_step_id_fkey";
DROP INDEX "steps_org_id_key";
-- The index takes the constraint's name (steps_pkey).
ALTER TABLE "steps" DROP CONSTRAINT "steps_pkey", ADD CONSTRAINT "steps_pkey" PRIMARY KEY USING INDEX "steps_id_org_id_key";
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_step_fkey" FOREIGN KEY ("org_id", "step_id") REFERENCES "steps" ("org_id", "id") ON DELETE CASCADE NOT VALID;
ALTER TABLE "signals" ADD CONSTRAINT "signals_step_fkey" FOREIGN KEY ("org_id", "step_id") REFERENCES "steps" ("org_id", "id") ON DELETE SET NULL ("step_id") NOT VALID;
ALTER TABLE "timers" ADD CONSTRAINT "timers_step_id_fkey" FOREIGN KEY ("org_id", "step_id") REFERENCES "steps" ("org_id", "id") ON DELETE CASCADE NOT VALID;
