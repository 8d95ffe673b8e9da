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
-- the four locks are taken together or not at all, in tries (GitLab's "lock retries"): a try waits at most its own
-- time for them, gives back what it took when that runs out, and lets the engine's writes through for twice that
-- time before the next. The first tries wait 50 ms (well under deadlock_timeout, so they never deadlock); each waits
-- a quarter longer than the one before, up to 2 s, for a machine so loaded that no 50 ms passes without an engine
-- transaction open on one of the four (a try past deadlock_timeout that does close a cycle with the engine ends one
-- of the two with a deadlock error: this one tries again, the engine's transaction is retried as any deadlock is; it
-- also makes PostgreSQL cancel an autovacuum of one of the four that stands in the way, unless it is one preventing
-- transaction ID wraparound, which runs to its end). After 120 s of tries it
-- fails and names the sessions that held the locks: run it again at a quieter moment, or with the lane workers
-- stopped. The keys come back NOT VALID (new rows are checked at once); the next migration validates the existing
-- rows without blocking writes (20261212100100_steps_keys_validate).
-- contract: approvals_step_fkey, signals_step_fkey, timers_step_id_fkey, steps_org_id_key, steps_pkey
-- reviewed do-block: the first takes the four locks (nothing else; on failure it reads pg_locks and pg_stat_activity for its message); the second refuses to go on unless steps_id_org_id_key is a valid unique index of steps (id, org_id). Neither writes.
DO $$
DECLARE
  deadline timestamptz := clock_timestamp() + interval '120 seconds';
  wait_ms int := 50;
  holders text;
BEGIN
  LOOP
    BEGIN
      PERFORM set_config('lock_timeout', wait_ms || 'ms', true);
      LOCK TABLE "steps", "approvals", "signals", "timers" IN ACCESS EXCLUSIVE MODE;
      EXIT;
    EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
      IF clock_timestamp() > deadline THEN
        SELECT string_agg(DISTINCT format('%s (pid %s, %s, its transaction open %s s)',
                 coalesce(nullif(a.application_name, ''), a.backend_type), a.pid, coalesce(a.state, 'no state'),
                 coalesce(round(extract(epoch FROM clock_timestamp() - a.xact_start)::numeric, 1)::text, '?')), '; ')
          INTO holders
          FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.granted AND l.pid <> pg_backend_pid() AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.relation IN ('steps'::regclass, 'approvals'::regclass, 'signals'::regclass, 'timers'::regclass);
        RAISE EXCEPTION 'steps, approvals, signals and timers stayed busy for 120 s of tries (held now by: %): run holdfast migrate again at a quieter moment, or with the lane workers stopped', coalesce(holders, 'no session');
      END IF;
      PERFORM pg_sleep(greatest(0.1, 2 * wait_ms / 1000.0) * (0.75 + random() * 0.5));
      wait_ms := least(wait_ms * 5 / 4, 2000);
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
