-- Lanes (issue 6): per-connection concurrency caps across all worker processes, and a circuit breaker per
-- connection. (steps.deferrals is added with the claim and settle functions that use it, 20261129090000.)

ALTER TABLE "connections" ADD COLUMN "limits" JSONB NOT NULL DEFAULT '{}',
  ADD COLUMN "breaker_state" TEXT NOT NULL DEFAULT 'closed',
  ADD COLUMN "breaker_opened_at" TIMESTAMPTZ(6),
  ADD COLUMN "breaker_probe" TEXT,
  ADD COLUMN "window_started_at" TIMESTAMPTZ(6),
  ADD COLUMN "window_calls" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "window_failures" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "connections" ADD CONSTRAINT "connections_breaker_check" CHECK (breaker_state IN ('closed', 'open', 'half_open'));

CREATE TABLE "connection_slots" (
    "connection_id" TEXT NOT NULL REFERENCES "connections"("id") ON DELETE CASCADE,
    "slot" INTEGER NOT NULL,
    "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
    "holder" TEXT,
    "lease_until" TIMESTAMPTZ(6),
    CONSTRAINT "connection_slots_pkey" PRIMARY KEY ("connection_id", "slot"),
    CONSTRAINT "connection_slots_lease_check" CHECK ((holder IS NULL) = (lease_until IS NULL))
);

-- Takes a free slot of the connection for one attempt (p_holder), creating the cap's rows on first use and dropping
-- rows above a lowered cap once free. A slot whose holder's lease lapsed (a dead worker) is free. Returns the slot
-- number, or NULL when all p_cap slots are held. A holder that already has one gets it back (extended).
CREATE FUNCTION holdfast_slot_acquire(p_org_id text, p_connection_id text, p_cap int, p_holder text, p_lease_ms float8)
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

-- Records one call's outcome for the connection's breaker and returns the state after it.
--   ok: the provider answered (any definite answer); failed: no answer or a server error (5xx, timeout, reset).
-- closed: counts calls and failures in a window of p_window_ms; opens when at least p_min_calls were made and the
-- failure rate reached p_rate. half_open: the probe's success closes it (and the caller resumes the parked steps),
-- its failure opens it again for another cool-down.
CREATE FUNCTION holdfast_breaker_record(p_connection_id text, p_ok boolean, p_holder text, p_window_ms float8,
                                        p_min_calls int, p_rate float8)
RETURNS text AS $$
DECLARE
  c record;
BEGIN
  SELECT breaker_state, breaker_probe, window_started_at, window_calls, window_failures INTO c
  FROM connections WHERE id = p_connection_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF c.breaker_state = 'half_open' THEN
    IF c.breaker_probe IS DISTINCT FROM p_holder THEN
      RETURN 'half_open'; -- a late answer from before the breaker opened: the probe decides
    END IF;
    UPDATE connections SET breaker_state = CASE WHEN p_ok THEN 'closed' ELSE 'open' END,
                           breaker_opened_at = CASE WHEN p_ok THEN NULL ELSE now() END, breaker_probe = NULL,
                           window_started_at = now(), window_calls = 0, window_failures = 0, updated_at = now()
    WHERE id = p_connection_id;
    RETURN CASE WHEN p_ok THEN 'closed' ELSE 'open' END;
  END IF;
  IF c.breaker_state = 'open' THEN
    RETURN 'open';
  END IF;
  IF c.window_started_at IS NULL OR c.window_started_at < now() - make_interval(secs => p_window_ms / 1000) THEN
    c.window_calls := 0;
    c.window_failures := 0;
    c.window_started_at := now();
  END IF;
  c.window_calls := c.window_calls + 1;
  c.window_failures := c.window_failures + CASE WHEN p_ok THEN 0 ELSE 1 END;
  IF c.window_calls >= p_min_calls AND c.window_failures::float8 / c.window_calls >= p_rate THEN
    UPDATE connections SET breaker_state = 'open', breaker_opened_at = now(), window_started_at = now(),
                           window_calls = 0, window_failures = 0, updated_at = now()
    WHERE id = p_connection_id;
    RETURN 'open';
  END IF;
  UPDATE connections SET window_started_at = c.window_started_at, window_calls = c.window_calls,
                         window_failures = c.window_failures
  WHERE id = p_connection_id;
  RETURN 'closed';
END;
$$ LANGUAGE plpgsql;
