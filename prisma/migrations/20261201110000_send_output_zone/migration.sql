-- A payload's zone that moves an existing contact must also move the contact's other pending waits (issue 16 item 7),
-- and that recompute is TypeScript (luxon's zone rules, contacts/zone.ts changeContactZone), so this function no
-- longer writes the zone of an existing contact. Called with a zone that differs from the stored one, it raises
-- HF004 and nothing of the statement commits: start/start-run.ts then starts the run in a transaction that moves the
-- zone and the waits together (only when the delivery starts a new run: a re-sent one is not news). A new contact
-- takes the zone at once (it has no waits yet); a NULL zone (none, or not a zone) changes nothing. Two starts that
-- create one contact at once meet at the unique key: the second reads the first's zone like any existing contact.
CREATE OR REPLACE FUNCTION holdfast_contact_resolve(p_org_id text, p_email text, p_time_zone text) RETURNS text AS $$
DECLARE
  contact_id text;
  stored_zone text;
BEGIN
  IF p_email IS NULL OR p_email = '' THEN
    RETURN NULL;
  END IF;
  INSERT INTO contacts (org_id, email, time_zone) VALUES (p_org_id, lower(p_email), p_time_zone)
  ON CONFLICT (org_id, email) DO NOTHING
  RETURNING id INTO contact_id;
  IF contact_id IS NULL THEN
    SELECT id, time_zone INTO contact_id, stored_zone FROM contacts WHERE org_id = p_org_id AND email = lower(p_email);
    IF p_time_zone IS NOT NULL AND stored_zone IS DISTINCT FROM p_time_zone THEN
      RAISE EXCEPTION 'contact % changes time zone from % to %: start in a transaction that moves its waits',
        contact_id, coalesce(stored_zone, 'none'), p_time_zone
        USING ERRCODE = 'HF004';
    END IF;
  END IF;
  RETURN contact_id;
END;
$$ LANGUAGE plpgsql;
