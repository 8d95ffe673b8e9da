-- Takes a free slot of the connection for one attempt (p_holder), creating the cap's rows on first use and dropping
-- rows above a lowered cap once free. A slot whose holder's lease lapsed (a dead worker) is free. Returns the slot
-- number, or NULL when all p_cap slots are held. A holder that already has one gets it back (extended).
-- History (prisma/migrations, never edited): 20261129120000_lanes.
CREATE OR REPLACE FUNCTION holdfast_slot_acquire(p_org_id text, p_connection_id text, p_cap int, p_holder text, p_lease_ms float8)
RETURNS int AS $$
DECLARE
  taken int;
BEGIN
  UPDATE connection_slots SET lease_until = now() + make_interval(secs => p_lease_ms / 1000)
  WHERE connection_id = p_connection_id AND holder = p_holder
  RETURNING slot INTO taken;
  IF FOUND THEN
    RETURN taken;
  END IF;
  INSERT INTO connection_slots (connection_id, slot, org_id)
  SELECT p_connection_id, g, p_org_id FROM generate_series(1, p_cap) g
  ON CONFLICT DO NOTHING;
  DELETE FROM connection_slots WHERE connection_id = p_connection_id AND slot > p_cap AND holder IS NULL;
  UPDATE connection_slots SET holder = p_holder, lease_until = now() + make_interval(secs => p_lease_ms / 1000)
  WHERE (connection_id, slot) = (
    SELECT connection_id, slot FROM connection_slots
    WHERE connection_id = p_connection_id AND slot <= p_cap AND (holder IS NULL OR lease_until < now())
    ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING slot INTO taken;
  RETURN taken;
END;
$$ LANGUAGE plpgsql;
