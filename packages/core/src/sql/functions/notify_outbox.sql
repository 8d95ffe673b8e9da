-- Trigger on outbox (AFTER INSERT, per statement): NOTIFY the relay only when the statement inserted a row that is due
-- now. Held and delayed rows are found by its poll when they come due, so a worker's local dispatch does not wake the
-- relay for nothing; PostgreSQL folds duplicate notifications within a transaction.
-- A due step.ready row also notifies its lane's channel, holdfast_ready_<lane>: the lane's workers LISTEN there and
-- take the row straight from the outbox when they have a free slot (steps/ready-listener.ts); the relay publishes
-- step.ready rows only after RELAY_STEP_READY_GRACE_MS, as the backstop. The relay's notification says which:
-- 'ready' when every due row inserted is a step.ready (the relay only looks again once the grace is over: no empty
-- pass per started run), 'now' when one is for the relay at once.
-- History (prisma/migrations, never edited): 20261129000000_init, 20261129010000_step_fast_path.
CREATE OR REPLACE FUNCTION holdfast_notify_outbox() RETURNS trigger AS $$
DECLARE
  lane text;
BEGIN
  IF EXISTS (SELECT 1 FROM inserted WHERE available_at <= now()) THEN
    PERFORM pg_notify('holdfast_outbox',
      CASE WHEN EXISTS (SELECT 1 FROM inserted WHERE available_at <= now() AND topic <> 'step.ready') THEN 'now' ELSE 'ready' END);
    FOR lane IN
      SELECT DISTINCT i.payload->>'lane' FROM inserted i
      WHERE i.topic = 'step.ready' AND i.available_at <= now() AND i.payload->>'lane' ~ '^[a-z][a-z0-9_]{0,40}$'
    LOOP
      PERFORM pg_notify('holdfast_ready_' || lane, '');
    END LOOP;
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
