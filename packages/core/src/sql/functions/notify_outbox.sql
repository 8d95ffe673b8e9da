-- Trigger on outbox (AFTER INSERT, per statement): NOTIFY the relay only when the statement inserted a row that is due
-- now. Held and delayed rows are found by its poll when they come due, so a worker's local dispatch does not wake the
-- relay for nothing; PostgreSQL folds duplicate notifications within a transaction.
-- History (prisma/migrations, never edited): 20261129000000_init, 20261129010000_step_fast_path.
CREATE OR REPLACE FUNCTION holdfast_notify_outbox() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted WHERE available_at <= now()) THEN
    PERFORM pg_notify('holdfast_outbox', '');
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
