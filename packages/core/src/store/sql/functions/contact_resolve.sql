-- Finds or creates the organisation's contact for an email (case-insensitive) and returns its id.
-- A payload's zone that moves an existing contact must also move the contact's other pending waits, and that
-- recompute is TypeScript (luxon's zone rules, run/timers/contact-zone.ts changeContactZone), so this function does not write
-- the zone of an existing contact. Called with a zone that differs from the stored one, it raises HF004 and nothing
-- of the statement commits: run/start/start-run.ts then starts the run in a transaction that moves the zone and the waits
-- together (only when the delivery starts a new run: a re-sent one is not news). A new contact takes the zone at once
-- (it has no waits yet); a NULL zone (none, or not a zone) changes nothing. Two starts that create one contact at
-- once meet at the unique key: the second reads the first's zone like any existing contact.
-- p_attributes (name, company, the trigger's kept fields: versions/kinds/declared-fields.ts contactAttributesOf) go over the
-- stored ones key by key (the latest delivery's values win; a key it does not send is kept), in the same statement;
-- an unchanged contact is not written. Were the merge past the row's bound, the delivery's own attributes replace them.
-- History (prisma/migrations, never edited): 20261129100000_contacts_connections, 20261201102000_settings_zones_notices,
-- 20261201110000_send_output_zone, 20261206100000_contact_attributes (the fourth argument).
CREATE OR REPLACE FUNCTION holdfast_contact_resolve(p_org_id text, p_email text, p_time_zone text, p_attributes jsonb) RETURNS text AS $$
DECLARE
  contact_id text;
  stored_zone text;
  attrs jsonb := CASE WHEN jsonb_typeof(p_attributes) = 'object' THEN p_attributes ELSE '{}'::jsonb END;
BEGIN
  IF p_email IS NULL OR p_email = '' THEN
    RETURN NULL;
  END IF;
  INSERT INTO contacts (org_id, email, time_zone, attributes) VALUES (p_org_id, lower(p_email), p_time_zone, attrs)
  ON CONFLICT (org_id, email) DO NOTHING
  RETURNING id INTO contact_id;
  IF contact_id IS NULL THEN
    SELECT id, time_zone INTO contact_id, stored_zone FROM contacts WHERE org_id = p_org_id AND email = lower(p_email);
    IF p_time_zone IS NOT NULL AND stored_zone IS DISTINCT FROM p_time_zone THEN
      RAISE EXCEPTION 'contact % changes time zone from % to %: start in a transaction that moves its waits',
        contact_id, coalesce(stored_zone, 'none'), p_time_zone
        USING ERRCODE = 'HF004';
    END IF;
    IF attrs <> '{}'::jsonb THEN
      UPDATE contacts
      SET attributes = CASE WHEN octet_length((attributes || attrs)::text) <= 65536 THEN attributes || attrs ELSE attrs END,
          updated_at = now()
      WHERE id = contact_id AND NOT (attributes @> attrs);
    END IF;
  END IF;
  RETURN contact_id;
END;
$$ LANGUAGE plpgsql;
