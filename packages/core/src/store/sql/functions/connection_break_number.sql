-- Trigger on connections (BEFORE UPDATE OF status): each move into needs_reconnect counts one more break.
-- History (prisma/migrations, never edited): 20261201102000_settings_zones_notices.
CREATE OR REPLACE FUNCTION holdfast_connection_break_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'needs_reconnect' AND OLD.status IS DISTINCT FROM 'needs_reconnect' THEN
    NEW.break_count := OLD.break_count + 1;
  END IF;
  RETURN NEW;
END $$;
