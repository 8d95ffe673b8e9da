-- Trigger on outbox (AFTER INSERT, per statement): NOTIFY the relay only when the statement inserted a row that is due
-- now and is the relay's to publish at once. Held and delayed rows are found by its poll when they come due, so a
-- worker's local dispatch does not wake the relay for nothing; PostgreSQL folds duplicate notifications within a
-- transaction.
-- A due step.ready row notifies its lane's channel, holdfast_ready_<lane>, and not the relay's: the lane's workers
-- LISTEN there and take the row straight from the outbox when they have a free slot (run/steps/ready-listener.ts); the
-- relay publishes a step.ready row nobody took once it is RELAY_STEP_READY_GRACE_MS old, found by its poll (a relay
-- with no grace LISTENs on the lanes' channels too: apps/relay). Telling the relay of every first step woke it and
-- made it look at the outbox once per started run, for rows the workers take. (Its listening backend still reads the
-- notification queue at every NOTIFY, whatever the channel: PostgreSQL signals every listener of the database.)
-- A transaction whose committer announces its first steps on Redis itself (holdfast.ready_wake = 'bus', set by the
-- start's statement: run/start/start-run.ts) sends no NOTIFY for them: a notifying commit holds a cluster-wide lock
-- through its flush, so notifying starts commit one at a time (measured in docs/performance.md).
-- History (prisma/migrations, never edited): 20261129000000_init, 20261129010000_step_fast_path; until 2026-12-03 the
-- relay heard 'ready' for a statement that brought only step.ready rows.
CREATE OR REPLACE FUNCTION holdfast_notify_outbox() RETURNS trigger AS $$
DECLARE
  lane text;
BEGIN
  IF EXISTS (SELECT 1 FROM inserted WHERE available_at <= now() AND topic <> 'step.ready') THEN
    PERFORM pg_notify('holdfast_outbox', 'now');
  END IF;
  FOR lane IN
    SELECT DISTINCT i.payload->>'lane' FROM inserted i
    WHERE i.topic = 'step.ready' AND i.available_at <= now() AND i.payload->>'lane' ~ '^[a-z][a-z0-9_]{0,40}$'
      AND current_setting('holdfast.ready_wake', true) IS DISTINCT FROM 'bus'
  LOOP
    PERFORM pg_notify('holdfast_ready_' || lane, '');
  END LOOP;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
