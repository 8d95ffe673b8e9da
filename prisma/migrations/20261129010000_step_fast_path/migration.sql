-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "seq" BIGINT NOT NULL DEFAULT 0;


-- ---------------------------------------------------------------------------------------------------------------
-- Hand-written: what Prisma cannot express. Keep below the generated part.
-- ---------------------------------------------------------------------------------------------------------------

-- The relay publishes rows once they are due (retries wait in the outbox; rows held for a worker's local
-- dispatch wait until their hold lapses), oldest first.
DROP INDEX IF EXISTS "outbox_unsent_idx";
CREATE INDEX "outbox_unsent_due_idx" ON "outbox" ("available_at", "id") WHERE sent_at IS NULL;

-- NOTIFY the relay only when a statement inserted a row that is due now: held and delayed rows are found by its
-- poll when they come due, so a worker's local dispatch does not wake the relay for nothing.
DROP TRIGGER outbox_notify ON "outbox";
CREATE OR REPLACE FUNCTION holdfast_notify_outbox() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted WHERE available_at <= now()) THEN
    PERFORM pg_notify('holdfast_outbox', '');
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER outbox_notify AFTER INSERT ON "outbox"
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION holdfast_notify_outbox();
