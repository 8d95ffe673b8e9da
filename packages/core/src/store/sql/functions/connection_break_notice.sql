-- Trigger on connections (AFTER UPDATE OF status): a move into needs_reconnect opens one connection_notices row per
-- break (the banner and the owed email); a move out of it resolves the open ones.
-- History (prisma/migrations, never edited): 20261201102000_settings_zones_notices.
CREATE OR REPLACE FUNCTION holdfast_connection_break_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'needs_reconnect' AND OLD.status IS DISTINCT FROM 'needs_reconnect' THEN
    INSERT INTO connection_notices (org_id, connection_id, break_no, reason)
    VALUES (NEW.org_id, NEW.id, NEW.break_count, NEW.status_reason)
    ON CONFLICT (connection_id, break_no) DO NOTHING;
  ELSIF OLD.status = 'needs_reconnect' AND NEW.status IS DISTINCT FROM 'needs_reconnect' THEN
    UPDATE connection_notices SET resolved_at = now()
    WHERE org_id = NEW.org_id AND connection_id = NEW.id AND resolved_at IS NULL;
  END IF;
  RETURN NULL;
END $$;
