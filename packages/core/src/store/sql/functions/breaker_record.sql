-- Records one call's outcome for the connection's breaker and returns the state after it.
--   ok: the provider answered (any definite answer); failed: no answer or a server error (5xx, timeout, reset).
-- closed: counts calls and failures in a window of p_window_ms; opens when at least p_min_calls were made and the
-- failure rate reached p_rate. half_open: the probe's success closes it (and the caller resumes the parked steps),
-- its failure opens it again for another cool-down.
-- History (prisma/migrations, never edited): 20261129120000_lanes.
CREATE OR REPLACE FUNCTION holdfast_breaker_record(p_connection_id text, p_ok boolean, p_holder text, p_window_ms float8,
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
