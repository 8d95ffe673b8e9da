-- effects: the ledger is found by its key ((org_id, key): the claim, the settle, the review), never by the id column,
-- a random text whose unique index took one more entry (on a random page) for every effect claimed. The key becomes
-- the primary key and the id goes: one index entry fewer for every effect.
--
-- One transaction. On a large existing database, build the key's new index first (then this migration uses it):
--   CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "effects_org_id_key_idx" ON "effects" ("org_id", "key");
-- The table's strongest lock is taken first (a SHARE lock for the index, upgraded later for the key, could deadlock
-- with a transaction that holds an effect row and wants another): effect claims and settles wait for this migration,
-- briefly when the index was built beforehand.
SET LOCAL lock_timeout = '10s';
LOCK TABLE "effects" IN ACCESS EXCLUSIVE MODE;
CREATE UNIQUE INDEX IF NOT EXISTS "effects_org_id_key_idx" ON "effects" ("org_id", "key");
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             WHERE c.relname = 'effects_org_id_key_idx' AND NOT i.indisvalid) THEN
    RAISE EXCEPTION 'index effects_org_id_key_idx is invalid (a CREATE INDEX CONCURRENTLY that did not finish): DROP INDEX it and build it again, then migrate';
  END IF;
END $$;
ALTER TABLE "effects" DROP CONSTRAINT "effects_pkey";
ALTER TABLE "effects" DROP CONSTRAINT "effects_key_key";
-- The index takes the constraint's name (effects_pkey).
ALTER TABLE "effects" ADD CONSTRAINT "effects_pkey" PRIMARY KEY USING INDEX "effects_org_id_key_idx";
ALTER TABLE "effects" DROP COLUMN "id";
