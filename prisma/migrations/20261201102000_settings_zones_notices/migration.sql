-- Issue 16, items 7 and 8: the contact's stored time zone decides waits, and a broken connection tells its owners.

-- Where a timer's zone came from (timers/plan.ts): 'run' (the payload's field), 'contact' (the contact's stored
-- zone), 'node' (the wait's fixed zone) or 'default' (UTC, nothing known). A change of the contact's zone recomputes
-- the pending timers whose zone is not the node's own (contacts/zone.ts). NULL: written before this column.
ALTER TABLE "timers" ADD COLUMN "zone_source" TEXT;
ALTER TABLE "timers" ADD CONSTRAINT "timers_zone_source_check"
  CHECK ("zone_source" IS NULL OR "zone_source" IN ('run', 'contact', 'node', 'default'));

-- A payload's zone updates the contact (it used to fill in only once): the newest word on where the person is wins.
-- Invalid zones never reach this function (start/start-run.ts passes only IANA zones, else NULL: no change).
CREATE OR REPLACE FUNCTION holdfast_contact_resolve(p_org_id text, p_email text, p_time_zone text) RETURNS text AS $$
DECLARE
  contact_id text;
BEGIN
  IF p_email IS NULL OR p_email = '' THEN
    RETURN NULL;
  END IF;
  INSERT INTO contacts (org_id, email, time_zone) VALUES (p_org_id, lower(p_email), p_time_zone)
  ON CONFLICT (org_id, email) DO NOTHING
  RETURNING id INTO contact_id;
  IF contact_id IS NULL THEN
    SELECT id INTO contact_id FROM contacts WHERE org_id = p_org_id AND email = lower(p_email);
    UPDATE contacts SET time_zone = p_time_zone, updated_at = now()
    WHERE id = contact_id AND p_time_zone IS NOT NULL AND time_zone IS DISTINCT FROM p_time_zone;
  END IF;
  RETURN contact_id;
END;
$$ LANGUAGE plpgsql;

-- One notice per break of a connection. A break is a change of connections.status to needs_reconnect from anything
-- else; break_count numbers them. Whoever marks the connection (the connector's parkOnConnection after a refused
-- login, the probe, a failed reconnect, Slack's revoked token), the trigger below numbers the break and writes the
-- notice in the same statement. Two processes marking the same connection at once serialise on its row lock: the
-- second sees status already needs_reconnect (no transition, no new number), and (connection_id, break_no) is unique
-- besides. The notice row is also the email's outbox: email_status pending until the sweeper sends it
-- (connections/notices.ts, claimed under a lease so a crashed sender's notice is taken again).
ALTER TABLE "connections" ADD COLUMN "break_count" INTEGER NOT NULL DEFAULT 0;

CREATE TABLE "connection_notices" (
  "id" TEXT NOT NULL DEFAULT ('ntc_' || replace(gen_random_uuid()::text, '-', '')),
  "org_id" TEXT NOT NULL,
  "connection_id" TEXT NOT NULL,
  "break_no" INTEGER NOT NULL,
  "reason" TEXT,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  -- Set when the connection is healthy again (reconnected, or the probe saw it work): the banner stops showing it.
  "resolved_at" TIMESTAMPTZ(6),
  "email_status" TEXT NOT NULL DEFAULT 'pending',
  "email_attempts" INTEGER NOT NULL DEFAULT 0,
  "email_claimed_until" TIMESTAMPTZ(6),
  "email_sent_at" TIMESTAMPTZ(6),
  "email_to" TEXT[],
  "email_error" TEXT,
  CONSTRAINT "connection_notices_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "connection_notices_break_key" UNIQUE ("connection_id", "break_no"),
  CONSTRAINT "connection_notices_email_status_check" CHECK ("email_status" IN ('pending', 'sending', 'sent', 'skipped', 'failed')),
  CONSTRAINT "connection_notices_connection_fkey" FOREIGN KEY ("org_id", "connection_id")
    REFERENCES "connections" ("org_id", "id") ON DELETE CASCADE
);
-- The banner's query (open notices of the user's organisations) and the sender's claim (pending, oldest first).
CREATE INDEX "connection_notices_open_idx" ON "connection_notices" ("org_id") WHERE "resolved_at" IS NULL;
CREATE INDEX "connection_notices_owed_idx" ON "connection_notices" ("created_at") WHERE "email_status" IN ('pending', 'sending');

SELECT holdfast_tenant_table('connection_notices');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "connection_notices" TO holdfast_web, holdfast_worker;

CREATE FUNCTION holdfast_connection_break_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'needs_reconnect' AND OLD.status IS DISTINCT FROM 'needs_reconnect' THEN
    NEW.break_count := OLD.break_count + 1;
  END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION holdfast_connection_break_notice() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER "connections_break_number" BEFORE UPDATE OF "status" ON "connections"
  FOR EACH ROW EXECUTE FUNCTION holdfast_connection_break_number();
CREATE TRIGGER "connections_break_notice" AFTER UPDATE OF "status" ON "connections"
  FOR EACH ROW EXECUTE FUNCTION holdfast_connection_break_notice();
