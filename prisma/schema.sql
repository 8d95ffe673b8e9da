-- The schema of a freshly migrated database (prisma/migrations, then packages/core/src/store/sql/functions), written by
-- `pnpm schema:dump` from pg_dump --schema-only --no-owner. Do not edit: change a migration or a function file and
-- dump again. packages/core/test/schema-dump.test.ts fails while this file and the migrated database differ.

CREATE FUNCTION public.holdfast_breaker_record(p_connection_id text, p_ok boolean, p_holder text, p_window_ms double precision, p_min_calls integer, p_rate double precision) RETURNS text
    LANGUAGE plpgsql
    AS $$
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
$$;

CREATE FUNCTION public.holdfast_budget_reserve(p_org_id text, p_key text, p_owner text, p_micros bigint) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
  left_after bigint;
BEGIN
  UPDATE org_budgets SET spent_micros = 0, period_start = (date_trunc('month', now() AT TIME ZONE 'UTC'))::date, updated_at = now()
  WHERE org_id = p_org_id AND period_start < (date_trunc('month', now() AT TIME ZONE 'UTC'))::date;
  IF EXISTS (SELECT 1 FROM budget_reservations WHERE org_id = p_org_id AND key = p_key AND owner = p_owner) THEN
    SELECT allowed_micros - reserved_micros - spent_micros INTO left_after FROM org_budgets WHERE org_id = p_org_id;
    RETURN left_after;
  END IF;
  UPDATE org_budgets SET reserved_micros = reserved_micros + p_micros, updated_at = now()
  WHERE org_id = p_org_id AND allowed_micros - reserved_micros - spent_micros >= p_micros
  RETURNING allowed_micros - reserved_micros - spent_micros INTO left_after;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  INSERT INTO budget_reservations (org_id, key, owner, micros) VALUES (p_org_id, p_key, p_owner, p_micros);
  RETURN left_after;
END;
$$;

CREATE FUNCTION public.holdfast_budget_settle(p_org_id text, p_key text, p_owner text, p_actual bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
  held bigint;
BEGIN
  UPDATE budget_reservations SET settled_at = now(), actual_micros = COALESCE(p_actual, micros)
  WHERE org_id = p_org_id AND key = p_key AND owner = p_owner AND settled_at IS NULL
  RETURNING micros INTO held;
  IF FOUND THEN
    UPDATE org_budgets SET reserved_micros = reserved_micros - held, spent_micros = spent_micros + COALESCE(p_actual, held),
                           updated_at = now()
    WHERE org_id = p_org_id;
  END IF;
END;
$$;

CREATE FUNCTION public.holdfast_connection_break_notice() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

CREATE FUNCTION public.holdfast_connection_break_number() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NEW.status = 'needs_reconnect' AND OLD.status IS DISTINCT FROM 'needs_reconnect' THEN
    NEW.break_count := OLD.break_count + 1;
  END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION public.holdfast_contact_resolve(p_org_id text, p_email text, p_time_zone text, p_attributes jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $$
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
$$;

CREATE FUNCTION public.holdfast_count_bucket(p_status text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE p_status WHEN 'ready' THEN 'now' WHEN 'running' THEN 'now' WHEN 'waiting' THEN 'now'
                       WHEN 'parked' THEN 'held' WHEN 'done' THEN 'passed' ELSE p_status END
$$;

CREATE FUNCTION public.holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
  chunk text := current_setting('holdfast.count_tally', true);
  kept text;
BEGIN
  IF chunk IS NULL OR chunk = '' THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (p_org_id, p_version_id, NULL, p_node_id, p_from, p_to);
    RETURN;
  END IF;
  kept := current_setting('holdfast.count_tally_' || chunk);
  IF octet_length(kept) >= 4096 THEN
    chunk := (chunk::integer + 1)::text;
    kept := '';
    PERFORM set_config('holdfast.count_tally', chunk, true);
  END IF;
  PERFORM set_config('holdfast.count_tally_' || chunk, kept || ',' || json_build_array(p_org_id, p_version_id, p_node_id, p_from, p_to)::text, true);
END;
$$;

CREATE FUNCTION public.holdfast_count_run() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NOT NEW.test THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (NEW.org_id, NEW.version_id, NEW.id, '', NULL, CASE WHEN TG_OP = 'INSERT' THEN 'started' ELSE NEW.status END);
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION public.holdfast_count_run_version() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF NOT NEW.test THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    VALUES (NEW.org_id, OLD.version_id, NEW.id, '', NULL, 'moved_out'), (NEW.org_id, NEW.version_id, NEW.id, '', NULL, 'moved_in');
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT s.org_id, m.version_id, NULL, s.node_id, m.from_bucket, m.to_bucket
    FROM steps s
    CROSS JOIN LATERAL (VALUES (OLD.version_id, holdfast_count_bucket(s.status), NULL),
                               (NEW.version_id, NULL, holdfast_count_bucket(s.status))) AS m(version_id, from_bucket, to_bucket)
    WHERE s.run_id = NEW.id AND s.status IN ('ready', 'running', 'waiting', 'parked');
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION public.holdfast_count_step() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  c record;
BEGIN
  SELECT r.version_id,
         CASE WHEN TG_OP = 'UPDATE' THEN
           CASE WHEN OLD.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(OLD.status) END
         END AS old_bucket,
         CASE WHEN NEW.status = 'cancelled' AND r.goal_met IS NOT NULL THEN 'converted' ELSE holdfast_count_bucket(NEW.status) END AS new_bucket
  INTO c
  FROM runs r WHERE r.id = NEW.run_id AND NOT r.test;
  IF FOUND THEN
    PERFORM holdfast_count_change(NEW.org_id, c.version_id, NEW.node_id, c.old_bucket, c.new_bucket);
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION public.holdfast_count_step_node() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  v text;
BEGIN
  IF NEW.status NOT IN ('ready', 'running', 'waiting', 'parked') THEN
    RETURN NULL;
  END IF;
  SELECT r.version_id INTO v FROM runs r WHERE r.id = NEW.run_id AND NOT r.test;
  IF FOUND THEN
    PERFORM holdfast_count_change(NEW.org_id, v, OLD.node_id, holdfast_count_bucket(NEW.status), NULL);
    PERFORM holdfast_count_change(NEW.org_id, v, NEW.node_id, NULL, holdfast_count_bucket(NEW.status));
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION public.holdfast_count_tally_flush() RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
  chunk text := current_setting('holdfast.count_tally', true);
  kept text;
BEGIN
  IF chunk IS NULL OR chunk = '' THEN
    RETURN;
  END IF;
  -- Nothing collected (a settle batch whose set counted its own): no read of the chunks.
  IF chunk = '0' AND current_setting('holdfast.count_tally_0') = '' THEN
    PERFORM set_config('holdfast.count_tally', '', true);
    RETURN;
  END IF;
  SELECT string_agg(current_setting('holdfast.count_tally_' || i), '' ORDER BY i) INTO kept
  FROM generate_series(0, chunk::integer) AS i;
  PERFORM set_config('holdfast.count_tally', '', true);
  IF kept <> '' THEN
    -- In key order, as the fold adds them.
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    SELECT c->>0, c->>1, c->>2, c->>3, c->>4, count(*)
    FROM jsonb_array_elements(('[' || ltrim(kept, ',') || ']')::jsonb) AS c
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5;
  END IF;
END;
$$;

CREATE FUNCTION public.holdfast_count_tally_start() RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM set_config('holdfast.count_tally_0', '', true), set_config('holdfast.count_tally', '0', true);
END;
$$;

CREATE FUNCTION public.holdfast_effect_claim(p_org_id text, p_run_id text, p_step_id text, p_node_id text, p_iteration integer, p_kind text, p_attempt integer, p_lease_ms double precision) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  eff_key text := p_run_id || '/' || p_node_id || '/' || p_iteration;
  found_row jsonb;
BEGIN
  SELECT jsonb_build_object(
           'key', e.key, 'status', e.status, 'owner', e.owner, 'attempts', e.attempts,
           'providerIdempotent', e.provider_idempotent, 'result', e.result, 'error', e.error,
           'firstAttemptAt', e.first_attempt_at,
           'leaseLeftMs', GREATEST(0, EXTRACT(EPOCH FROM e.lease_until - now()) * 1000)::float8)
    INTO found_row FROM effects e WHERE e.org_id = p_org_id AND e.key = eff_key;
  IF found_row IS NOT NULL THEN
    RETURN jsonb_build_object('claimed', false, 'row', found_row);
  END IF;
  INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until)
  VALUES (p_org_id, p_run_id, p_step_id, eff_key, p_kind, 'in_flight', p_step_id || ':' || p_attempt,
          now() + make_interval(secs => p_lease_ms / 1000));
  RETURN jsonb_build_object('claimed', true);
END;
$$;

CREATE FUNCTION public.holdfast_email_outcome(p_org_id text, p_effect_key text, p_outcome text, p_detail jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
  m record;
  first boolean;
BEGIN
  IF p_outcome NOT IN ('opened', 'clicked', 'replied', 'bounced', 'unsubscribed') THEN
    RAISE EXCEPTION 'not an email outcome: %', p_outcome;
  END IF;
  SELECT * INTO m FROM email_messages WHERE org_id = p_org_id AND effect_key = p_effect_key FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'unknown';
  END IF;
  first := CASE p_outcome WHEN 'opened' THEN m.opened_at IS NULL WHEN 'clicked' THEN m.clicked_at IS NULL
                          WHEN 'replied' THEN m.replied_at IS NULL WHEN 'bounced' THEN m.bounced_at IS NULL
                          ELSE m.unsubscribed_at IS NULL END;
  UPDATE email_messages SET
    opened_at = CASE WHEN p_outcome = 'opened' THEN COALESCE(opened_at, now()) ELSE opened_at END,
    open_count = open_count + CASE WHEN p_outcome = 'opened' THEN 1 ELSE 0 END,
    clicked_at = CASE WHEN p_outcome = 'clicked' THEN COALESCE(clicked_at, now()) ELSE clicked_at END,
    click_count = click_count + CASE WHEN p_outcome = 'clicked' THEN 1 ELSE 0 END,
    replied_at = CASE WHEN p_outcome = 'replied' THEN COALESCE(replied_at, now()) ELSE replied_at END,
    reply_count = reply_count + CASE WHEN p_outcome = 'replied' THEN 1 ELSE 0 END,
    bounced_at = CASE WHEN p_outcome = 'bounced' THEN COALESCE(bounced_at, now()) ELSE bounced_at END,
    bounce_count = bounce_count + CASE WHEN p_outcome = 'bounced' THEN 1 ELSE 0 END,
    bounce_status = CASE WHEN p_outcome = 'bounced' AND first THEN left(p_detail->>'status', 20) ELSE bounce_status END,
    bounce_detail = CASE WHEN p_outcome = 'bounced' AND first THEN left(p_detail->>'detail', 1000) ELSE bounce_detail END,
    unsubscribed_at = CASE WHEN p_outcome = 'unsubscribed' THEN COALESCE(unsubscribed_at, now()) ELSE unsubscribed_at END
  WHERE org_id = p_org_id AND effect_key = p_effect_key;
  IF NOT first THEN
    RETURN 'again';
  END IF;
  INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
  VALUES (m.org_id, m.version_id, m.run_id, m.node_id, NULL, 'email:' || p_outcome);
  INSERT INTO run_events (org_id, run_id, step_id, node_id, type, data)
  VALUES (m.org_id, m.run_id, m.step_id, m.node_id, 'email.' || p_outcome,
          CASE WHEN p_outcome = 'bounced' THEN jsonb_build_object('status', left(p_detail->>'status', 20), 'detail', left(p_detail->>'detail', 1000)) END);
  IF p_outcome IN ('replied', 'clicked') THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('holdfast email outcome ' || m.run_id, 0));
    -- A fresh snapshot (READ COMMITTED): another message of this run that got its first reply or click committed
    -- before the lock was granted is seen here.
    IF NOT EXISTS (SELECT 1 FROM email_messages e WHERE e.org_id = m.org_id AND e.run_id = m.run_id AND e.effect_key <> m.effect_key
                     AND CASE WHEN p_outcome = 'replied' THEN e.replied_at IS NOT NULL ELSE e.clicked_at IS NOT NULL END) THEN
      INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
      VALUES (m.org_id, m.version_id, m.run_id, '', NULL, 'outcome:' || p_outcome);
    END IF;
  END IF;
  RETURN 'first';
END;
$$;

CREATE FUNCTION public.holdfast_email_sent() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  m record;
BEGIN
  INSERT INTO email_messages (org_id, effect_key, automation_id, version_id, run_id, step_id, node_id, message_id, recipient,
                              sent_at, delivered_at)
  SELECT NEW.org_id, NEW.key, r.automation_id, r.version_id, NEW.run_id, NEW.step_id, s.node_id,
         left(NEW.result->>'messageId', 998), lower(left(COALESCE(NEW.result->>'to', ''), 320)), now(),
         CASE WHEN jsonb_typeof(NEW.result->'accepted') = 'array' AND jsonb_array_length(NEW.result->'accepted') > 0 THEN now() END
  FROM steps s JOIN runs r ON r.id = s.run_id
  WHERE s.id = NEW.step_id AND NOT r.test
  ON CONFLICT (org_id, effect_key) DO NOTHING
  RETURNING org_id, version_id, run_id, node_id, delivered_at INTO m;
  IF FOUND THEN
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT m.org_id, m.version_id, m.run_id, m.node_id, NULL, b
    FROM unnest(CASE WHEN m.delivered_at IS NULL THEN ARRAY['email:sent'] ELSE ARRAY['email:sent', 'email:delivered'] END) AS b;
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION public.holdfast_invitation_org(p_token_hash text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
  SELECT org_id FROM invitations WHERE token_hash = p_token_hash
$$;

CREATE FUNCTION public.holdfast_notify_outbox() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
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
$_$;

CREATE FUNCTION public.holdfast_ordered_id(prefix text) RETURNS text
    LANGUAGE sql PARALLEL SAFE
    AS $$
  SELECT prefix || encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')
$$;

CREATE FUNCTION public.holdfast_org_default_budget() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
  INSERT INTO org_budgets (org_id, allowed_micros) VALUES (NEW.id, 20000000) ON CONFLICT (org_id) DO NOTHING;
  RETURN NEW;
END $$;

CREATE FUNCTION public.holdfast_refuse_published_version_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF OLD.published_at IS NOT NULL THEN
    RAISE EXCEPTION 'automation version % (v%) is published and immutable', OLD.id, OLD.version
      USING ERRCODE = 'HF001';
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END;
$$;

CREATE FUNCTION public.holdfast_rows_insert(p_org_id text, p_run_id text, p_rows jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
  wanted int;
  written int;
  version text;
BEGIN
  -- Empty lists insert nothing (the outbox's NOTIFY trigger fires per statement, even for none).
  wanted := jsonb_array_length(COALESCE(p_rows->'steps', '[]'::jsonb));
  IF wanted > 0 THEN
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, owner, attempt, lease_until)
    SELECT s.id, s."orgId", s."runId", s."nodeId", s.iteration, s.kind, s.lane, s."maxAttempts", s.status, s.owner,
           COALESCE(s.attempt, 0), now() + make_interval(secs => s."leaseMs" / 1000)
    FROM jsonb_to_recordset(p_rows->'steps')
      AS s(id text, "orgId" text, "runId" text, "nodeId" text, iteration int, kind text, lane text, "maxAttempts" int,
           status text, owner text, attempt int, "leaseMs" float8)
    WHERE s."orgId" = p_org_id AND s."runId" = p_run_id;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> wanted THEN
      RAISE EXCEPTION 'a step row names another run than %', p_run_id USING ERRCODE = 'HF005';
    END IF;
  END IF;
  IF jsonb_typeof(p_rows->'claim') = 'object' AND NOT EXISTS (
       SELECT 1 FROM jsonb_array_elements(COALESCE(p_rows->'steps', '[]'::jsonb)) s WHERE s->>'id' = p_rows->'claim'->>'stepId') THEN
    RAISE EXCEPTION 'the claimed step is not one this walk of % inserted', p_run_id USING ERRCODE = 'HF005';
  END IF;
  wanted := jsonb_array_length(COALESCE(p_rows->'events', '[]'::jsonb));
  IF wanted > 0 THEN
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    SELECT e."orgId", e."runId", e."stepId", e."nodeId", e.attempt, e.type, e.lane, e.worker, e.data
    FROM ROWS FROM (jsonb_to_recordset(p_rows->'events')
           AS ("orgId" text, "runId" text, "stepId" text, "nodeId" text, attempt int, type text, lane text, worker text, data jsonb))
         WITH ORDINALITY AS e("orgId", "runId", "stepId", "nodeId", attempt, type, lane, worker, data, n)
    WHERE e."orgId" = p_org_id AND e."runId" = p_run_id
    ORDER BY e.n;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> wanted THEN
      RAISE EXCEPTION 'a timeline row names another run than %', p_run_id USING ERRCODE = 'HF005';
    END IF;
  END IF;
  wanted := jsonb_array_length(COALESCE(p_rows->'outbox', '[]'::jsonb));
  IF wanted > 0 THEN
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    SELECT o."orgId", o."runId", o.topic, o.payload, now() + make_interval(secs => COALESCE(o."delayMs", 0) / 1000)
    FROM ROWS FROM (jsonb_to_recordset(p_rows->'outbox')
           AS ("orgId" text, "runId" text, topic text, payload jsonb, "delayMs" float8))
         WITH ORDINALITY AS o("orgId", "runId", topic, payload, "delayMs", n)
    WHERE o."orgId" = p_org_id AND o."runId" = p_run_id
      AND COALESCE(o.payload->>'orgId', p_org_id) = p_org_id AND COALESCE(o.payload->>'runId', p_run_id) = p_run_id
      AND (o.payload->>'stepId' IS NULL
           OR o.payload->>'stepId' IN (SELECT s->>'id' FROM jsonb_array_elements(COALESCE(p_rows->'steps', '[]'::jsonb)) s))
    ORDER BY o.n;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> wanted THEN
      RAISE EXCEPTION 'an outbox row or its payload names another run than %, or a step it did not insert', p_run_id USING ERRCODE = 'HF005';
    END IF;
  END IF;
  IF jsonb_array_length(COALESCE(p_rows->'edges', '[]'::jsonb)) > 0 THEN
    SELECT r.version_id INTO version FROM runs r WHERE r.id = p_run_id AND r.org_id = p_org_id AND NOT r.test;
    IF FOUND THEN
      -- An edge that leaves a split names the run (absent "run": a previous release's edge, which named it).
      INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
      SELECT p_org_id, version, p_run_id, e."nodeId", e.bucket
      FROM jsonb_to_recordset(p_rows->'edges') AS e("nodeId" text, bucket text, run boolean)
      WHERE e.run IS NOT FALSE;
      -- Any other: no run, summed with its neighbours' when the transaction collects (count_tally_start.sql).
      PERFORM holdfast_count_change(p_org_id, version, e."nodeId", NULL, e.bucket)
      FROM jsonb_to_recordset(p_rows->'edges') AS e("nodeId" text, bucket text, run boolean)
      WHERE e.run IS FALSE;
    END IF;
  END IF;
END;
$$;

CREATE FUNCTION public.holdfast_run_budgets() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  SELECT COALESCE(NEW.max_steps, a.run_max_steps, o.run_max_steps),
         COALESCE(NEW.expires_at, NEW.created_at + make_interval(secs => COALESCE(a.run_max_age_seconds, o.run_max_age_seconds)))
    INTO NEW.max_steps, NEW.expires_at
  FROM organisations o LEFT JOIN automations a ON a.id = NEW.automation_id AND a.org_id = o.id
  WHERE o.id = NEW.org_id;
  RETURN NEW;
END;
$$;

CREATE FUNCTION public.holdfast_run_duplicate(p_org_id text, p_run_id text, p_event_data jsonb) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
  kept CONSTANT integer := 3;
  n integer;
BEGIN
  UPDATE runs SET duplicate_deliveries = duplicate_deliveries + 1, last_duplicate_at = now()
  WHERE org_id = p_org_id AND id = p_run_id
  RETURNING duplicate_deliveries INTO n;
  IF n IS NULL THEN
    RAISE EXCEPTION 'run % not found to count a repeated start', p_run_id;
  END IF;
  IF n <= kept THEN
    INSERT INTO run_events (org_id, run_id, type, data)
    VALUES (p_org_id, p_run_id, 'run.duplicate_start',
            COALESCE(p_event_data, '{}'::jsonb) || jsonb_build_object('duplicate', n)
            || CASE WHEN n = kept
                    THEN jsonb_build_object('more', 'later repeats are counted on the run, not written here')
                    ELSE '{}'::jsonb END);
  END IF;
  RETURN n;
END;
$$;

CREATE FUNCTION public.holdfast_run_start(p_run_id text, p_org_id text, p_automation_id text, p_version_id text, p_start_key text, p_input jsonb, p_event_data jsonb, p_rows jsonb, p_contact_id text) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  run_id text;
BEGIN
  INSERT INTO runs (id, org_id, automation_id, version_id, start_key, input, seq, contact_id)
  VALUES (p_run_id, p_org_id, p_automation_id, p_version_id, p_start_key, p_input, 1, p_contact_id)
  ON CONFLICT (org_id, start_key) DO NOTHING
  RETURNING id INTO run_id;
  IF run_id IS NULL THEN
    -- ON CONFLICT waited for the other start to commit; in PL/pgSQL each statement takes a fresh snapshot
    -- (READ COMMITTED), so this SELECT sees the committed row.
    SELECT id INTO run_id FROM runs WHERE org_id = p_org_id AND start_key = p_start_key;
    IF run_id IS NULL THEN
      RAISE EXCEPTION 'start key % conflicted but no run holds it', p_start_key;
    END IF;
    PERFORM holdfast_run_duplicate(p_org_id, run_id, p_event_data);
    RETURN jsonb_build_object('runId', run_id, 'inserted', false);
  END IF;
  PERFORM holdfast_rows_insert(p_org_id, run_id, p_rows);
  IF jsonb_typeof(p_rows->'finish') = 'object' THEN
    UPDATE runs SET status = p_rows->'finish'->>'status', error = p_rows->'finish'->'error', finished_at = now(),
                    seq = seq + 1, updated_at = now()
    WHERE id = run_id;
  END IF;
  RETURN jsonb_build_object('runId', run_id, 'inserted', true);
END;
$$;

CREATE FUNCTION public.holdfast_run_steps(p_run_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
BEGIN
  RETURN (
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
             'id', o.id, 'nodeId', o.node_id, 'iteration', o.iteration, 'status', o.status,
             'output', o.output, 'error', o.error, 'advanced', o.advanced_at IS NOT NULL,
             'leased', o.status = 'running' AND o.lease_until >= now()) ORDER BY o.created_at, o.id), '[]'::jsonb)
    FROM steps o WHERE o.run_id = p_run_id);
END;
$$;

CREATE FUNCTION public.holdfast_scope_all() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT COALESCE(current_setting('holdfast.all_orgs', true), 'off') = 'on' $$;

CREATE FUNCTION public.holdfast_scope_orgs() RETURNS text[]
    LANGUAGE sql STABLE
    AS $$
  SELECT CASE WHEN COALESCE(current_setting('holdfast.session', true), '') = ''
              THEN COALESCE(string_to_array(NULLIF(current_setting('holdfast.org_ids', true), ''), ','), '{}')
              ELSE public.holdfast_scope_session_orgs() END
$$;

CREATE FUNCTION public.holdfast_scope_session_orgs() RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
  RETURN (
    SELECT COALESCE(array_agg(DISTINCT o.id), '{}') FROM (
      SELECT unnest(string_to_array(NULLIF(current_setting('holdfast.org_ids', true), ''), ',')) AS id
      UNION ALL
      SELECT m.org_id FROM sessions s JOIN memberships m ON m.user_id = s.user_id
      WHERE s.id = NULLIF(current_setting('holdfast.session', true), '')
        AND s.expires_at > now() AND s.idle_expires_at > now()
    ) o);
END;
$$;

CREATE FUNCTION public.holdfast_slot_acquire(p_org_id text, p_connection_id text, p_cap integer, p_holder text, p_lease_ms double precision) RETURNS integer
    LANGUAGE plpgsql
    AS $$
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
$$;

CREATE FUNCTION public.holdfast_start_target(p_org_slug text, p_automation_slug text) RETURNS TABLE(org_id text, automation_id text, automation_found boolean, trigger_auth text, signing_secrets text[], url_tokens text[], version_id text, version integer, now_epoch double precision, needs_sample boolean, gate text, fingerprint text)
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT t.org_id, t.automation_id, t.automation_found, t.trigger_auth, t.signing_secrets, t.url_tokens, t.version_id,
         t.version, EXTRACT(EPOCH FROM now())::float8, t.needs_sample, t.gate,
         encode(sha256(convert_to(t::text, 'UTF8')), 'hex')
  FROM (
    SELECT o.id AS org_id, a.id AS automation_id, a.id IS NOT NULL AS automation_found, a.trigger_auth,
           COALESCE(c.signing, '{}'::text[]) AS signing_secrets, COALESCE(c.tokens, '{}'::text[]) AS url_tokens,
           v.id AS version_id, v.version, a.sample_input IS NULL AS needs_sample,
           CASE WHEN a.status = 'paused' THEN a.pause_mode ELSE a.status END AS gate
    FROM organisations o
    LEFT JOIN automations a ON a.org_id = o.id AND a.slug = p_automation_slug
    LEFT JOIN LATERAL (
      SELECT av.id, av.version FROM automation_versions av
      WHERE av.org_id = o.id AND av.automation_id = a.id AND av.published_at IS NOT NULL
      ORDER BY av.version DESC LIMIT 1
    ) v ON true
    LEFT JOIN LATERAL (
      SELECT array_agg(tc.secret ORDER BY tc.kind, tc.secret) FILTER (WHERE tc.kind = 'signing_secret') AS signing,
             array_agg(tc.secret ORDER BY tc.kind, tc.secret) FILTER (WHERE tc.kind = 'url_token') AS tokens
      FROM trigger_credentials tc
      WHERE tc.org_id = o.id AND tc.automation_id = a.id AND (tc.expires_at IS NULL OR tc.expires_at > now())
    ) c ON true
    WHERE o.slug = p_org_slug
  ) t;
END;
$$;

CREATE FUNCTION public.holdfast_step_claim(p_step_id text, p_worker text, p_lease_ms double precision, p_outbox_id bigint, p_effect_kinds text[]) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  s record;
  r record;
  seen jsonb;
  effect jsonb;
BEGIN
  -- FOR SHARE: a cancel that locked the run first is seen here (we wait for it); one that comes after sees this
  -- step running with a live lease and waits for its settle instead of cancelling it under the worker.
  SELECT id, version_id, input, seq, max_steps, expires_at, test INTO r FROM runs
  WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id)
    AND status = 'running' AND cancel_requested_at IS NULL
    -- A run past its age budget performs nothing more: the sweeper wakes it and the walk stops it.
    AND (expires_at IS NULL OR expires_at > now())
  FOR SHARE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  FOR pass IN 1..2 LOOP
    UPDATE steps SET status = 'running', owner = p_worker, attempt = attempt + 1,
                     lease_until = now() + make_interval(secs => p_lease_ms / 1000), updated_at = now()
    WHERE id = p_step_id AND status = 'ready' AND available_at <= now()
    RETURNING id, org_id, run_id, node_id, iteration, kind, lane, attempt, max_attempts, deferrals INTO s;
    EXIT WHEN FOUND;
    IF pass = 2 THEN
      RETURN NULL;
    END IF;
    -- A takeover: the step's last attempt still runs under a lease that lapsed (its worker died or hung) and the
    -- sweeper has not handed it on yet. The timeline says so here, as the sweeper's rescue does
    -- (store/sql/steps-sweep.ts), so every attempt after the first has its reason.
    UPDATE steps SET status = 'running', owner = p_worker, attempt = attempt + 1,
                     lease_until = now() + make_interval(secs => p_lease_ms / 1000), updated_at = now()
    WHERE id = p_step_id AND status = 'running' AND lease_until < now() AND available_at <= now()
    RETURNING id, org_id, run_id, node_id, iteration, kind, lane, attempt, max_attempts, deferrals INTO s;
    IF FOUND THEN
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker)
      VALUES (s.org_id, s.run_id, s.id, s.node_id, s.attempt - 1, 'step.lease_expired', s.lane, p_worker);
      EXIT;
    END IF;
    -- Not running under a lapsed lease either. The sweeper's rescue may have made the step ready while the takeover
    -- waited for its row (the first look saw it running, before that commit): the ready claim once more.
  END LOOP;
  INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker)
  VALUES (s.org_id, s.run_id, s.id, s.node_id, s.attempt, 'step.claimed', s.lane, p_worker);
  IF s.kind = ANY(p_effect_kinds) THEN
    effect := holdfast_effect_claim(s.org_id, s.run_id, s.id, s.node_id, s.iteration, s.kind, s.attempt, p_lease_ms);
  END IF;
  IF p_outbox_id IS NOT NULL THEN
    UPDATE outbox SET sent_at = now() WHERE id = p_outbox_id AND sent_at IS NULL;
  END IF;
  seen := holdfast_run_steps(s.run_id);
  RETURN jsonb_build_object(
    'id', s.id, 'orgId', s.org_id, 'runId', s.run_id, 'nodeId', s.node_id, 'iteration', s.iteration,
    'kind', s.kind, 'lane', s.lane, 'attempt', s.attempt, 'maxAttempts', s.max_attempts, 'deferrals', s.deferrals,
    'versionId', r.version_id, 'maxSteps', r.max_steps, 'expired', COALESCE(r.expires_at <= now(), false), 'input', r.input, 'runSeq', r.seq::text, 'runSteps', seen, 'effect', effect,
    'test', r.test);
END;
$$;

CREATE FUNCTION public.holdfast_step_settle(p_step_id text, p_token integer, p_worker text, p_status text, p_output jsonb, p_error jsonb, p_delay_ms double precision, p_event text, p_event_data jsonb, p_run_seq bigint, p_rows jsonb, p_retry jsonb, p_effect jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  r record;
  s record;
  advance boolean;
  claim jsonb;
  claimed jsonb;
  effect jsonb;
  cause record;
BEGIN
  -- A park whose cause was cleared while this attempt ran (the connection reconnected, the breaker closed, the
  -- budget raised) becomes a plain return to ready. The cause's row is read under a share lock before anything else
  -- is locked: a reconnect, breaker close or budget change either committed first (seen here) or waits for this
  -- commit and then resumes the parked step itself.
  IF p_status = 'parked' THEN
    IF p_error->>'code' IN ('needs_reconnect', 'breaker_open') THEN
      SELECT status, breaker_state INTO cause FROM connections WHERE id = p_error->>'connectionId' FOR SHARE;
      IF (p_error->>'code' = 'needs_reconnect' AND cause.status = 'ok')
         OR (p_error->>'code' = 'breaker_open' AND cause.breaker_state = 'closed') THEN
        p_status := 'ready';
      END IF;
    ELSIF p_error->>'code' = 'budget_exhausted' THEN
      SELECT b.allowed_micros - b.reserved_micros - b.spent_micros AS left_micros INTO cause
      FROM org_budgets b WHERE b.org_id = (SELECT org_id FROM steps WHERE id = p_step_id) FOR SHARE;
      IF cause.left_micros >= COALESCE((p_error->>'estimateMicros')::bigint, 0) THEN
        p_status := 'ready';
      END IF;
    END IF;
    IF p_status = 'ready' THEN
      p_delay_ms := 0;
      p_event := 'step.deferred';
      p_event_data := jsonb_build_object('reason', 'what it waited for was resolved while it ran');
    END IF;
  END IF;

  -- The run is locked before the step (the engine's and cancel's order). When the worker's walk still applies
  -- (same seq, running, not cancelling), the run's own update is the lock: one write of the run row, not a lock
  -- and then a write.
  advance := false;
  IF p_status <> 'ready' AND p_rows IS NOT NULL THEN
    UPDATE runs SET
      -- seq only (no index holds it: a HOT update); updated_at only when the run ends (its own state changed).
      seq = seq + 1,
      updated_at = CASE WHEN p_rows->'finish'->>'status' IS NULL THEN updated_at ELSE now() END,
      status = COALESCE(p_rows->'finish'->>'status', status),
      error = CASE WHEN jsonb_typeof(p_rows->'finish') = 'object' THEN p_rows->'finish'->'error' ELSE error END,
      finished_at = CASE WHEN p_rows->'finish'->>'status' IS NULL THEN finished_at ELSE now() END
    WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id)
      AND seq = p_run_seq AND status = 'running' AND cancel_requested_at IS NULL
      -- A run held by its paused automation takes no next step here: the engine's walk holds it (run.wake).
      AND held_at IS NULL
    RETURNING id, seq, false AS cancelling, version_id, input, max_steps, expires_at, test INTO r;
    advance := FOUND;
  END IF;
  IF NOT advance THEN
    SELECT id, seq, cancel_requested_at IS NOT NULL AS cancelling, version_id, input, max_steps, expires_at, test INTO r FROM runs
    WHERE id = (SELECT run_id FROM steps WHERE id = p_step_id) FOR UPDATE;
  END IF;
  UPDATE steps SET
    status = p_status,
    output = CASE WHEN p_status = 'done' THEN p_output ELSE output END,
    error = CASE WHEN p_status = 'done' THEN NULL ELSE p_error END,
    settled_at = CASE WHEN p_status IN ('ready', 'parked') THEN NULL ELSE now() END,
    available_at = CASE WHEN p_status = 'ready' THEN now() + make_interval(secs => p_delay_ms / 1000) ELSE available_at END,
    advanced_at = CASE WHEN advance THEN now() ELSE advanced_at END,
    -- A step given back for want of a connection slot (step.deferred) or parked for a person did not use an attempt.
    deferrals = deferrals + CASE WHEN p_event = 'step.deferred' OR p_status = 'parked' THEN 1 ELSE 0 END,
    owner = NULL, lease_until = NULL, updated_at = now()
  WHERE id = p_step_id AND attempt = p_token AND status = 'running'
  RETURNING org_id, run_id, node_id, attempt, lane INTO s;
  IF NOT FOUND THEN
    -- A newer attempt holds the step. If the run was already moved on for this settle, undo it all (HF003: the
    -- caller reads it as "not changed").
    IF advance THEN
      RAISE EXCEPTION 'step % attempt % no longer holds its lease', p_step_id, p_token USING ERRCODE = 'HF003';
    END IF;
    RETURN jsonb_build_object('changed', false);
  END IF;

  -- The effect's answer commits with the step's: fenced by the effect's owner token as the step is by its attempt.
  IF p_effect IS NOT NULL AND (p_effect->>'release')::boolean IS TRUE THEN
    DELETE FROM effects
    WHERE org_id = p_effect->>'orgId' AND key = p_effect->>'key' AND owner = p_effect->>'owner'
      AND status = 'in_flight' AND attempts = 1;
  ELSIF p_effect IS NOT NULL THEN
    UPDATE effects SET status = 'settled', result = p_effect->'result',
                       error = CASE WHEN jsonb_typeof(p_effect->'error') = 'null' THEN NULL ELSE p_effect->'error' END,
                       owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now()
    WHERE org_id = p_effect->>'orgId' AND key = p_effect->>'key' AND owner = p_effect->>'owner' AND status = 'in_flight';
    IF NOT FOUND THEN
      RAISE EXCEPTION 'effect % was taken over by another attempt', p_effect->>'key' USING ERRCODE = 'HF002';
    END IF;
  END IF;

  -- A walk that claims its next step for this worker (local dispatch) says so in this row, data.chained {nodeId,
  -- iteration} (the step's id is its run's step at that node and iteration: 48 bytes a step fewer than naming it):
  -- the chained step's claim is this commit's, by this worker, attempt 1, on this lane, so it needs no row of its own
  -- (the timeline's reader shows it as that step's step.claimed: runEventsForRun). A worker
  -- of an earlier release still sends the claim's own step.claimed row in p_rows: then this row says nothing more.
  INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
  VALUES (s.org_id, s.run_id, p_step_id, s.node_id, s.attempt, p_event, s.lane, p_worker,
          CASE WHEN advance AND p_status IN ('done', 'failed') AND jsonb_typeof(p_rows->'claim') = 'object'
                    AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(p_rows->'events', '[]'::jsonb)) e
                                    WHERE e->>'type' = 'step.claimed' AND e->>'stepId' = p_rows->'claim'->>'stepId')
               THEN COALESCE(p_event_data, '{}'::jsonb)
                    || jsonb_build_object('chained', jsonb_build_object('nodeId', p_rows->'claim'->'nodeId', 'iteration', p_rows->'claim'->'iteration'))
               ELSE p_event_data END);

  IF p_status = 'parked' THEN
    -- Waits for a person (p_error says why and which connection resumes it); a run being cancelled goes on to
    -- its cancellation instead.
    IF r.cancelling THEN
      INSERT INTO outbox (org_id, run_id, topic, payload)
      VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'cancel'));
    END IF;
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  IF p_status = 'ready' AND r.cancelling THEN
    -- Nobody will claim the retry of a run being cancelled: the engine finishes the cancellation instead.
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'cancel'));
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  IF p_status = 'ready' THEN
    IF p_retry IS NULL THEN
      RAISE EXCEPTION 'step % goes back to ready but its settle brought no step.ready row (p_retry)', p_step_id;
    END IF;
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    VALUES (s.org_id, s.run_id, p_retry->>'topic', p_retry->'payload', now() + make_interval(secs => p_delay_ms / 1000));
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  IF NOT advance THEN
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (s.org_id, s.run_id, 'run.wake', jsonb_build_object('orgId', s.org_id, 'runId', s.run_id, 'reason', 'step_settled'));
    RETURN jsonb_build_object('changed', true, 'advanced', false);
  END IF;

  -- The walk's rows as the worker prepared them, in its timeline order (inline nodes, the steps it scheduled, how
  -- the run ended); the run row already carries the end.
  PERFORM holdfast_rows_insert(s.org_id, s.run_id, p_rows);
  claim := p_rows->'claim';
  IF jsonb_typeof(claim) = 'object' THEN
    -- Local dispatch: the step inserted already claimed by this worker (attempt 1 is its fencing token); its effect
    -- key is claimed in the same commit, as a claim would. The run as that step's inline walk will see it (read after
    -- every write above).
    effect := CASE WHEN (claim->>'effect')::boolean
                   THEN holdfast_effect_claim(s.org_id, s.run_id, claim->>'stepId', claim->>'nodeId', (claim->>'iteration')::int,
                                              claim->>'kind', 1, (claim->>'leaseMs')::float8) END;
    claimed := jsonb_build_object(
      'versionId', r.version_id, 'maxSteps', r.max_steps, 'expired', COALESCE(r.expires_at <= now(), false), 'input', r.input,
      'runSeq', r.seq::text, 'effect', effect, 'test', r.test,
      -- The run's steps for that walk, unless the worker said it knows them (claim.runStepsKnown: the steps its claim
      -- saw, its own settled, and this one; run/apply/inline.ts stepsAfterSettle): a read of every step of the run a
      -- chained step saved (holdfast_run_steps).
      'runSteps', CASE WHEN (claim->>'runStepsKnown')::boolean IS TRUE THEN NULL ELSE holdfast_run_steps(s.run_id) END);
  END IF;
  RETURN jsonb_build_object('changed', true, 'advanced', true, 'claimed', claimed);
END;
$$;

CREATE FUNCTION public.holdfast_step_settle_batch(p_items jsonb, p_take jsonb, p_tally boolean) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  item jsonb;
  answer jsonb;
  -- An array grown in place (PL/pgSQL appends to an expanded array), made JSON once: jsonb || jsonb copied the whole
  -- answer list at every item.
  answers jsonb[] := '{}';
  takers integer[] := '{}';
  i integer := 0;
  took jsonb;
  step jsonb;
  k integer := 0;
  set_answers jsonb;
BEGIN
  p_tally := p_tally IS TRUE;
  IF p_tally THEN
    PERFORM holdfast_count_tally_start();
  END IF;
  -- The items that ended their step with the walk their worker made (the common case at peak: a chain's steps) are
  -- settled as sets by holdfast_step_settle_set (step_settle_set.sql); when one of them cannot be (HF007), nothing of
  -- that attempt is kept and every item is settled one by one below, as is every item it left.
  IF jsonb_array_length(p_items) > 0 THEN
    BEGIN
      set_answers := holdfast_step_settle_set(p_items);
    EXCEPTION WHEN SQLSTATE 'HF007' THEN
      set_answers := NULL;
    END;
  END IF;
  FOR item IN SELECT value FROM jsonb_array_elements(p_items) WITH ORDINALITY ORDER BY ordinality LOOP
    i := i + 1;
    answer := set_answers->(i::text);
    IF answer IS NULL THEN
      BEGIN
        answer := holdfast_step_settle(
          item->>'stepId', (item->>'token')::int, item->>'worker', item->>'status', item->'output', item->'error',
          COALESCE((item->>'delayMs')::float8, 0), item->>'event', item->'eventData', (item->>'runSeq')::bigint,
          item->'rows', item->'retry', item->'effect');
      EXCEPTION WHEN SQLSTATE 'HF002' OR SQLSTATE 'HF003' THEN
        answer := '{"changed": false}'::jsonb;
      END;
    END IF;
    answer := COALESCE(answer, '{"changed": false}'::jsonb);
    answers := answers || answer;
    IF (item->>'take')::boolean AND (answer->>'changed')::boolean AND jsonb_typeof(answer->'claimed') IS DISTINCT FROM 'object' THEN
      takers := takers || i;
    END IF;
  END LOOP;
  IF p_tally THEN
    -- The take below claims steps (ready to running: the same bucket, no change); any change it made would be its own row.
    PERFORM holdfast_count_tally_flush();
  END IF;
  IF p_take IS NULL OR cardinality(takers) = 0 THEN
    RETURN jsonb_build_object('answers', to_jsonb(answers), 'looked', false, 'taken', 0, 'more', false);
  END IF;
  -- A row whose run another transaction holds is left for another take (this statement holds its settles' runs).
  took := holdfast_steps_take_ready(p_take->>'lane', cardinality(takers), p_take->>'worker', (p_take->>'leaseMs')::float8,
                                    ARRAY(SELECT jsonb_array_elements_text(p_take->'effectKinds')), true);
  FOR step IN SELECT value FROM jsonb_array_elements(took->'claimed') LOOP
    k := k + 1;
    answers[takers[k]] := answers[takers[k]] || jsonb_build_object('taken', step);
  END LOOP;
  RETURN jsonb_build_object('answers', to_jsonb(answers), 'looked', true, 'taken', took->'taken', 'more', took->'more');
END;
$$;

CREATE FUNCTION public.holdfast_step_settle_many(p_items jsonb, p_take jsonb) RETURNS jsonb
    LANGUAGE sql
    AS $$
  SELECT holdfast_step_settle_batch(p_items, p_take, false);
$$;

CREATE FUNCTION public.holdfast_step_settle_set(p_items jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    AS $$
DECLARE
  wanted integer;
  got integer;
  ran jsonb;
  settled integer;
  effects_wanted integer;
  effects_got integer;
  steps_wanted integer;
  steps_got integer;
  events_wanted integer;
  events_got integer;
  outbox_wanted integer;
  outbox_got integer;
  claims_wanted integer;
  claims_got integer;
  effects_shared integer;
  answers jsonb;
  summed boolean;
  -- The setting as the caller left it, put back after statement 2.
  prior text := current_setting('holdfast.count_by_statement', true);
BEGIN
  -- 1. Each item's run: seq + 1 and, when its walk ended it, its end. The update is the run's lock.
  WITH a AS (
    SELECT i.n, i.v, s.run_id, s.org_id,
           count(*) OVER (PARTITION BY s.run_id) = 1
             AND i.v->>'status' IN ('done', 'failed') AND jsonb_typeof(i.v->'rows') = 'object' AND i.v->>'runSeq' IS NOT NULL
             AND (i.v->'effect' IS NULL OR jsonb_typeof(i.v->'effect') = 'object') AS walked
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n)
    JOIN steps s ON s.id = i.v->>'stepId'
  ), f AS (
    -- The walked items before the batch's first other one: the caller sorts the items by run, so the set's runs are
    -- locked before those the items after it lock one by one, and two batches lock runs in one order.
    SELECT a.n, a.v, a.run_id, a.org_id FROM a
    WHERE a.walked AND a.n < COALESCE((SELECT min(b.n) FROM a b WHERE NOT b.walked), 9223372036854775807)
  ), u AS (
    UPDATE runs r SET
      seq = r.seq + 1,
      updated_at = CASE WHEN f.v->'rows'->'finish'->>'status' IS NULL THEN r.updated_at ELSE now() END,
      status = COALESCE(f.v->'rows'->'finish'->>'status', r.status),
      error = CASE WHEN jsonb_typeof(f.v->'rows'->'finish') = 'object' THEN f.v->'rows'->'finish'->'error' ELSE r.error END,
      finished_at = CASE WHEN f.v->'rows'->'finish'->>'status' IS NULL THEN r.finished_at ELSE now() END
    FROM f
    -- Running, said by its finish (runs_finished_check: no finished_at exactly while it runs), for the reason the steps
    -- UPDATE below says by owner: no index holds it, so each run is found by its key.
    WHERE r.id = f.run_id AND r.org_id = f.org_id AND r.seq = (f.v->>'runSeq')::bigint AND r.finished_at IS NULL
      AND r.cancel_requested_at IS NULL AND r.held_at IS NULL
    RETURNING f.n, r.id, r.org_id, r.seq, r.version_id, r.test, r.max_steps, COALESCE(r.expires_at <= now(), false) AS expired,
              CASE WHEN jsonb_typeof(f.v->'rows'->'claim') = 'object' THEN r.input END AS input
  )
  SELECT (SELECT count(*) FROM f), count(*), COALESCE(jsonb_object_agg(u.n::text, jsonb_build_object(
           'runId', u.id, 'orgId', u.org_id, 'seq', u.seq::text, 'versionId', u.version_id, 'test', u.test,
           'maxSteps', u.max_steps, 'expired', u.expired, 'input', u.input)), '{}'::jsonb)
  INTO wanted, got, ran FROM u;
  IF wanted = 0 THEN
    RETURN '{}'::jsonb;
  END IF;
  IF got <> wanted THEN
    RAISE EXCEPTION 'a run of the batch was not moved on by its walk' USING ERRCODE = 'HF007';
  END IF;

  -- 2. The steps' outcomes, their effects' answers, the settles' timeline rows and the walks' rows, in one statement.
  -- Its sub-statements run in no set order: each table is written by one of them, and the timeline's rows by one
  -- INSERT in each run's order (the settle's row, then its walk's). The journey count changes that name no run are
  -- made by the statement too (`moves`): the step count triggers stand aside while holdfast.count_by_statement is on
  -- (20261215100000_count_by_statement).
  summed := COALESCE(current_setting('holdfast.count_tally', true), '') <> '';
  PERFORM set_config('holdfast.count_by_statement', 'on', true);
  WITH f AS (
    SELECT i.n, i.v FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n) WHERE ran ? (i.n::text)
  ), st AS (
    UPDATE steps s SET
      status = f.v->>'status',
      output = CASE WHEN f.v->>'status' = 'done' THEN f.v->'output' ELSE s.output END,
      error = CASE WHEN f.v->>'status' = 'done' THEN NULL ELSE f.v->'error' END,
      settled_at = now(),
      advanced_at = now(),
      deferrals = s.deferrals + CASE WHEN f.v->>'event' = 'step.deferred' THEN 1 ELSE 0 END,
      owner = NULL, lease_until = NULL, updated_at = now()
    FROM f
    -- Running, said by its owner (steps_lease_check: a step has an owner exactly while it runs): a condition on status
    -- let the planner read every running step through the open steps' index and match each to the items, at every
    -- batch; by owner, which no index holds, each step is found by its key.
    WHERE s.id = f.v->>'stepId' AND s.attempt = (f.v->>'token')::int AND s.owner IS NOT NULL
      -- The run step 1 moved on (the step's run, as its org; a walk's rows are kept to them below).
      AND s.run_id = ran->(f.n::text)->>'runId'
    RETURNING f.n, f.v, s.org_id, s.run_id, s.node_id, s.attempt, s.lane
  ), eff AS (
    UPDATE effects e SET status = 'settled', result = st.v->'effect'->'result',
                         error = CASE WHEN jsonb_typeof(st.v->'effect'->'error') = 'null' THEN NULL ELSE st.v->'effect'->'error' END,
                         owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now()
    FROM st
    WHERE jsonb_typeof(st.v->'effect') = 'object' AND (st.v->'effect'->>'release')::boolean IS NOT TRUE
      AND e.org_id = st.v->'effect'->>'orgId' AND e.key = st.v->'effect'->>'key' AND e.owner = st.v->'effect'->>'owner'
      AND e.status = 'in_flight'
    RETURNING 1
  ), released AS (
    DELETE FROM effects e USING st
    WHERE (st.v->'effect'->>'release')::boolean IS TRUE
      AND e.org_id = st.v->'effect'->>'orgId' AND e.key = st.v->'effect'->>'key' AND e.owner = st.v->'effect'->>'owner'
      AND e.status = 'in_flight' AND e.attempts = 1
    RETURNING 1
  ), new_steps AS (
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, owner, attempt, lease_until)
    SELECT x.id, x."orgId", x."runId", x."nodeId", x.iteration, x.kind, x.lane, x."maxAttempts", x.status, x.owner,
           COALESCE(x.attempt, 0), now() + make_interval(secs => x."leaseMs" / 1000)
    FROM st CROSS JOIN LATERAL jsonb_to_recordset(COALESCE(st.v->'rows'->'steps', '[]'::jsonb))
      AS x(id text, "orgId" text, "runId" text, "nodeId" text, iteration int, kind text, lane text, "maxAttempts" int,
           status text, owner text, attempt int, "leaseMs" float8)
    WHERE x."orgId" = st.org_id AND x."runId" = st.run_id
    RETURNING 1
  ), events AS (
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    SELECT a.org_id, a.run_id, a.step_id, a.node_id, a.attempt, a.type, a.lane, a.worker, a.data
    FROM (
      -- The settle's own row; data.chained names the node and iteration of the step its walk claimed for this worker (step_settle.sql).
      SELECT st.n, 0::bigint AS k, st.org_id, st.run_id, st.v->>'stepId' AS step_id, st.node_id, st.attempt,
             st.v->>'event' AS type, st.lane, st.v->>'worker' AS worker,
             CASE WHEN jsonb_typeof(st.v->'rows'->'claim') = 'object'
                       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(st.v->'rows'->'events', '[]'::jsonb)) e
                                       WHERE e->>'type' = 'step.claimed' AND e->>'stepId' = st.v->'rows'->'claim'->>'stepId')
                  THEN COALESCE(st.v->'eventData', '{}'::jsonb)
                       || jsonb_build_object('chained', jsonb_build_object('nodeId', st.v->'rows'->'claim'->'nodeId',
                                                                          'iteration', st.v->'rows'->'claim'->'iteration'))
                  ELSE st.v->'eventData' END AS data
      FROM st
      UNION ALL
      SELECT st.n, e.k, e."orgId", e."runId", e."stepId", e."nodeId", e.attempt, e.type, e.lane, e.worker, e.data
      FROM st CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(COALESCE(st.v->'rows'->'events', '[]'::jsonb))
             AS ("orgId" text, "runId" text, "stepId" text, "nodeId" text, attempt int, type text, lane text, worker text, data jsonb))
           WITH ORDINALITY AS e("orgId", "runId", "stepId", "nodeId", attempt, type, lane, worker, data, k)
      WHERE e."orgId" = st.org_id AND e."runId" = st.run_id
    ) a
    ORDER BY a.n, a.k
    RETURNING 1
  ), boxed AS (
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    SELECT o."orgId", o."runId", o.topic, o.payload, now() + make_interval(secs => COALESCE(o."delayMs", 0) / 1000)
    FROM st CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(COALESCE(st.v->'rows'->'outbox', '[]'::jsonb))
           AS ("orgId" text, "runId" text, topic text, payload jsonb, "delayMs" float8))
         WITH ORDINALITY AS o("orgId", "runId", topic, payload, "delayMs", k)
    WHERE o."orgId" = st.org_id AND o."runId" = st.run_id
      AND COALESCE(o.payload->>'orgId', st.org_id) = st.org_id AND COALESCE(o.payload->>'runId', st.run_id) = st.run_id
      AND (o.payload->>'stepId' IS NULL
           OR o.payload->>'stepId' IN (SELECT s->>'id' FROM jsonb_array_elements(COALESCE(st.v->'rows'->'steps', '[]'::jsonb)) s))
    ORDER BY st.n, o.k
    RETURNING 1
  ), edges AS (
    -- An edge that leaves a split keeps its run (holdfast_rows_insert); the others are summed below.
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
    SELECT st.org_id, ran->(st.n::text)->>'versionId', st.run_id, x."nodeId", x.bucket
    FROM st CROSS JOIN LATERAL jsonb_to_recordset(COALESCE(st.v->'rows'->'edges', '[]'::jsonb)) AS x("nodeId" text, bucket text, run boolean)
    WHERE x.run IS NOT FALSE AND ran->(st.n::text)->>'orgId' = st.org_id AND NOT (ran->(st.n::text)->>'test')::boolean
    RETURNING 1
  ), moves AS MATERIALIZED (
    -- The journey count changes that name no run (test runs count nothing): the steps written above, each as
    -- holdfast_count_step makes it for a row (a settled step leaves "now", it was running, for its outcome's bucket;
    -- each step the walk inserted enters its status's), and the edges the walks took that leave no split (the ones
    -- holdfast_rows_insert gives holdfast_count_change). The walk's steps are counted as given: a statement that did
    -- not insert every one raises HF007 below, and none of this is kept.
    SELECT st.org_id, ran->(st.n::text)->>'versionId' AS version_id, m.node_id, m.from_bucket, m.to_bucket
    FROM st CROSS JOIN LATERAL (
      SELECT st.node_id, 'now'::text AS from_bucket, holdfast_count_bucket(st.v->>'status') AS to_bucket
      UNION ALL
      SELECT x."nodeId", NULL,
             CASE WHEN x.status = 'cancelled' AND EXISTS (SELECT 1 FROM runs r WHERE r.id = st.run_id AND r.goal_met IS NOT NULL)
                  THEN 'converted' ELSE holdfast_count_bucket(x.status) END
      FROM jsonb_to_recordset(COALESCE(st.v->'rows'->'steps', '[]'::jsonb)) AS x("orgId" text, "runId" text, "nodeId" text, status text)
      WHERE x."orgId" = st.org_id AND x."runId" = st.run_id
      UNION ALL
      SELECT x."nodeId", NULL, x.bucket
      FROM jsonb_to_recordset(COALESCE(st.v->'rows'->'edges', '[]'::jsonb)) AS x("nodeId" text, bucket text, run boolean)
      WHERE x.run IS FALSE
    ) m
    WHERE NOT (ran->(st.n::text)->>'test')::boolean
  ), moves_summed AS (
    -- Summed while the transaction collects (holdfast_count_tally_start), else a count_changes row each, as
    -- holdfast_count_change writes them.
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    SELECT m.org_id, m.version_id, m.node_id, m.from_bucket, m.to_bucket, count(*) FROM moves m WHERE summed
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ), moves_unsummed AS (
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT m.org_id, m.version_id, NULL, m.node_id, m.from_bucket, m.to_bucket FROM moves m WHERE NOT summed
  ), claims AS (
    -- The effect key of a step the walk claimed for this worker (holdfast_effect_claim's insert, attempt 1).
    INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until)
    SELECT st.org_id, st.run_id, c.c->>'stepId', st.run_id || '/' || (c.c->>'nodeId') || '/' || (c.c->>'iteration')::int,
           c.c->>'kind', 'in_flight', (c.c->>'stepId') || ':1', now() + make_interval(secs => (c.c->>'leaseMs')::float8 / 1000)
    FROM st CROSS JOIN LATERAL (SELECT st.v->'rows'->'claim' AS c) c
    WHERE jsonb_typeof(c.c) = 'object' AND (c.c->>'effect')::boolean
      AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.org_id = st.org_id
                        AND e.key = st.run_id || '/' || (c.c->>'nodeId') || '/' || (c.c->>'iteration')::int)
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM st),
         (SELECT count(*) FROM f WHERE jsonb_typeof(f.v->'effect') = 'object' AND (f.v->'effect'->>'release')::boolean IS NOT TRUE),
         (SELECT count(*) FROM eff),
         (SELECT COALESCE(sum(jsonb_array_length(COALESCE(f.v->'rows'->'steps', '[]'::jsonb))), 0) FROM f),
         (SELECT count(*) FROM new_steps),
         (SELECT count(*) + COALESCE(sum(jsonb_array_length(COALESCE(f.v->'rows'->'events', '[]'::jsonb))), 0) FROM f),
         (SELECT count(*) FROM events),
         (SELECT COALESCE(sum(jsonb_array_length(COALESCE(f.v->'rows'->'outbox', '[]'::jsonb))), 0) FROM f),
         (SELECT count(*) FROM boxed),
         (SELECT count(*) FROM f WHERE jsonb_typeof(f.v->'rows'->'claim') = 'object' AND (f.v->'rows'->'claim'->>'effect')::boolean),
         (SELECT count(*) FROM claims),
         -- An effect another item of the batch names too: alone, one of them is refused (HF002), in the batch's order.
         (SELECT count(*) FROM f
          JOIN jsonb_array_elements(p_items) WITH ORDINALITY AS o(v, n)
            ON o.n <> f.n AND jsonb_typeof(o.v->'effect') = 'object'
           AND o.v->'effect'->>'orgId' = f.v->'effect'->>'orgId' AND o.v->'effect'->>'key' = f.v->'effect'->>'key'
          WHERE jsonb_typeof(f.v->'effect') = 'object')
  INTO settled, effects_wanted, effects_got, steps_wanted, steps_got, events_wanted, events_got, outbox_wanted, outbox_got,
       claims_wanted, claims_got, effects_shared;
  PERFORM set_config('holdfast.count_by_statement', COALESCE(prior, ''), true);
  IF settled <> wanted OR effects_got <> effects_wanted OR effects_shared <> 0 OR steps_got <> steps_wanted
     OR events_got <> events_wanted OR outbox_got <> outbox_wanted OR claims_got <> claims_wanted THEN
    RAISE EXCEPTION 'an item of the batch cannot be settled with the others' USING ERRCODE = 'HF007';
  END IF;
  -- A step the walk claims must be one it inserted (holdfast_rows_insert's check).
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n)
             WHERE ran ? (i.n::text) AND jsonb_typeof(i.v->'rows'->'claim') = 'object'
               AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(i.v->'rows'->'steps', '[]'::jsonb)) s
                               WHERE s->>'id' = i.v->'rows'->'claim'->>'stepId')) THEN
    RAISE EXCEPTION 'a claimed step is not one its walk inserted' USING ERRCODE = 'HF007';
  END IF;

  -- 3. The answers; a claimed step's run as its inline walk will see it (read after every write above).
  SELECT jsonb_object_agg(i.n::text, jsonb_build_object('changed', true, 'advanced', true, 'claimed',
           CASE WHEN jsonb_typeof(i.v->'rows'->'claim') = 'object' THEN jsonb_build_object(
             'versionId', r->'versionId', 'maxSteps', r->'maxSteps', 'expired', r->'expired', 'input', r->'input',
             'runSeq', r->'seq', 'test', r->'test',
             'effect', CASE WHEN (i.v->'rows'->'claim'->>'effect')::boolean THEN '{"claimed": true}'::jsonb END,
             'runSteps', CASE WHEN (i.v->'rows'->'claim'->>'runStepsKnown')::boolean IS TRUE THEN NULL
                              ELSE holdfast_run_steps(r->>'runId') END) END))
  INTO answers
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n)
  CROSS JOIN LATERAL (SELECT ran->(i.n::text) AS r) x
  WHERE ran ? (i.n::text);
  RETURN answers;
END;
$$;

CREATE FUNCTION public.holdfast_steps_take_ready(p_lane text, p_limit integer, p_worker text, p_lease_ms double precision, p_effect_kinds text[], p_skip_busy_runs boolean) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  o record;
  claimed jsonb;
  steps jsonb := '[]'::jsonb;
  taken integer := 0;
  busy integer := 0;
  more boolean := false;
BEGIN
  FOR o IN
    WITH due AS (
      SELECT id, payload FROM outbox
      WHERE sent_at IS NULL AND available_at <= now() AND topic = 'step.ready' AND payload->>'lane' = p_lane
      ORDER BY available_at, id
      LIMIT p_limit
      FOR UPDATE SKIP LOCKED
    )
    SELECT id, payload FROM due ORDER BY payload->>'runId', payload->>'stepId'
  LOOP
    IF p_skip_busy_runs THEN
      PERFORM 1 FROM runs WHERE id = (SELECT run_id FROM steps WHERE id = o.payload->>'stepId') FOR SHARE SKIP LOCKED;
      IF NOT FOUND THEN
        busy := busy + 1;
        CONTINUE;
      END IF;
    END IF;
    UPDATE outbox SET sent_at = now() WHERE id = o.id;
    taken := taken + 1;
    claimed := holdfast_step_claim(o.payload->>'stepId', p_worker, p_lease_ms, NULL, p_effect_kinds);
    IF claimed IS NOT NULL THEN
      steps := steps || jsonb_build_array(claimed);
    END IF;
  END LOOP;
  IF busy > 0 THEN
    more := true;
  ELSIF taken = p_limit THEN
    -- (This statement sees the rows it marked sent; a row another take has locked but not sent yet counts.)
    more := EXISTS (
      SELECT 1 FROM outbox
      WHERE sent_at IS NULL AND available_at <= now() AND topic = 'step.ready' AND payload->>'lane' = p_lane
    );
  END IF;
  RETURN jsonb_build_object('taken', taken, 'claimed', steps, 'more', more);
END;
$$;

CREATE FUNCTION public.holdfast_tenant_table(t regclass) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t);
  -- The sub-selects make the scope an InitPlan: computed once per statement, not once per row.
  EXECUTE format(
    'CREATE POLICY tenant_scope ON %s TO holdfast_web
       USING ((SELECT holdfast_scope_all()) OR org_id = ANY ((SELECT holdfast_scope_orgs())::text[]))
       WITH CHECK ((SELECT holdfast_scope_all()) OR org_id = ANY ((SELECT holdfast_scope_orgs())::text[]))', t);
  EXECUTE format('CREATE POLICY worker_all ON %s TO holdfast_worker USING (true) WITH CHECK (true)', t);
END $$;

CREATE FUNCTION public.holdfast_timers_fire_walk(p_ids text[], p_wakes integer[], p_by text, p_plans jsonb, p_tally boolean) RETURNS TABLE("timerId" text, wake integer, "orgId" text, "runId" text, "stepId" text, "latenessMs" double precision, "versionId" text, "nodeId" text, walked text)
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_bitmapscan TO 'off'
    AS $$
#variable_conflict use_column
DECLARE
  -- The setting as the caller left it, put back after the statement.
  prior text := current_setting('holdfast.count_by_statement', true);
BEGIN
  p_tally := p_tally IS TRUE;
  IF p_tally THEN
    PERFORM holdfast_count_tally_start();
  END IF;
  PERFORM set_config('holdfast.count_by_statement', 'on', true), set_config('holdfast.count_unlocked', '[]', true),
          set_config('holdfast.count_run_end_by_statement', 'on', true);
  -- PL/pgSQL, not SQL: its plan is kept for the session's next batch rather than made again at every call.
  RETURN QUERY
  -- Every CTE below reads the one before it row by row, or a table by its keys: no CTE is joined to another (their
  -- row counts are unknown to the planner, which then nests loops over them: a cost that grows with the square of the
  -- batch, measured in the spike as twice the due sweep's PostgreSQL CPU a timer of the walk's path).
  WITH fired AS MATERIALIZED (
    UPDATE timers t SET fired_at = now(), fired_by = p_by, updated_at = now(),
                        lateness_ms = GREATEST(0, EXTRACT(EPOCH FROM now() - t.due_at) * 1000)
    WHERE t.id = ANY(p_ids) AND t.fired_at IS NULL AND t.due_at <= now()
      AND (p_wakes IS NULL OR (t.id, t.wake) IN (SELECT * FROM unnest(p_ids, p_wakes)))
    RETURNING t.id, t.wake, t.org_id, t.run_id, t.step_id, t.due_at, t.lateness_ms
  ), facts AS MATERIALIZED (
    SELECT f.*, s.node_id, s.kind AS step_kind, s.status = 'waiting' AS was_waiting, r.version_id, r.test, r.plan,
           r.applies AND s.status = 'waiting' AND jsonb_typeof(r.plan) = 'object'
             AND (jsonb_typeof(r.plan -> 'next') = 'object' OR jsonb_typeof(r.plan -> 'end') = 'string')
             -- No other step open or settled and not walked on, and under the step budget: one read of the run's steps.
             AND (SELECT count(*) FILTER (WHERE o.id <> f.step_id AND (o.status IN ('ready', 'running', 'waiting', 'parked')
                                                                     OR (o.status IN ('done', 'failed') AND o.advanced_at IS NULL))) = 0
                         AND (r.max_steps IS NULL OR count(*) < r.max_steps)
                  FROM steps o WHERE o.run_id = f.run_id) AS applies
    FROM fired f
    LEFT JOIN steps s ON s.id = f.step_id
    -- The run, locked here without waiting: one another transaction holds is walked by the caller's path (a run.wake).
    LEFT JOIN LATERAL (
      SELECT r.version_id, r.test, p_plans -> (r.version_id || ' ' || s.node_id) AS plan, r.max_steps,
             r.org_id = f.org_id AND r.status = 'running' AND r.cancel_requested_at IS NULL AND r.held_at IS NULL
               AND NOT COALESCE(r.expires_at <= now(), false) AND NOT r.test AS applies
      FROM runs r WHERE r.id = f.run_id FOR UPDATE SKIP LOCKED
    ) r ON true
  ), settled AS MATERIALIZED (
    -- The wait settles only if it is still waiting at its newest version (the UPDATE re-reads the row it waits for):
    -- `facts` read it in the statement's snapshot, taken before the run was locked, so another writer may have settled
    -- it since. Only the waits settled here go on to `plain`, and only at the node their plan was looked up by: a run
    -- the lock found moved on by a writer that committed after the snapshot (a migration: another version, the wait
    -- renamed) has its plan keyed by its new version and the wait's old node, and is left to the caller's walk.
    UPDATE steps s SET status = 'done', settled_at = now(), updated_at = now(),
                       advanced_at = CASE WHEN x.applies AND s.node_id = x.node_id THEN now() ELSE s.advanced_at END,
                       output = COALESCE(s.output, '{}'::jsonb)
                                || jsonb_build_object('dueAt', x.due_at, 'firedAt', now(), 'latenessMs', x.lateness_ms)
                                || CASE WHEN s.kind = 'wait_for_reply' THEN '{"outcome": "timeout"}'::jsonb ELSE '{}'::jsonb END
    FROM facts x WHERE s.id = x.step_id AND s.status = 'waiting'
    -- The wait's node as the update found it (a migration may have renamed it after the statement's snapshot).
    RETURNING x.*, s.node_id AS settled_node
  ), plain AS MATERIALIZED (
    SELECT x.*, x.plan -> 'next' ->> 'nodeId' AS next_node,
           CASE WHEN jsonb_typeof(x.plan -> 'next') = 'object' THEN holdfast_ordered_id('stp_') END AS next_id,
           CASE WHEN jsonb_typeof(x.plan -> 'next') = 'object' THEN
             (SELECT COALESCE(max(i.iteration), 0) + 1 FROM steps i WHERE i.run_id = x.run_id AND i.node_id = x.plan -> 'next' ->> 'nodeId')
           END AS next_iteration
    FROM settled x WHERE x.applies AND x.settled_node = x.node_id
  ), next_steps AS MATERIALIZED (
    -- A step already at its (run, node, iteration) (the snapshot's count of iterations is as old as the snapshot) is
    -- not written over, and the batch goes on: that run's plan is dropped below and the caller walks it.
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, attempt)
    SELECT p.next_id, p.org_id, p.run_id, p.next_node, p.next_iteration, p.plan -> 'next' ->> 'kind',
           p.plan -> 'next' ->> 'lane', (p.plan -> 'next' ->> 'maxAttempts')::int, 'ready', 0
    FROM plain p WHERE p.next_id IS NOT NULL
    ON CONFLICT (run_id, node_id, iteration) DO NOTHING
    RETURNING id
  ), applied AS MATERIALIZED (
    -- The plans applied here: the runs that end, and the runs whose next step went in (a hashed lookup, not a join).
    SELECT p.* FROM plain p WHERE p.next_id IS NULL OR p.next_id IN (SELECT n.id FROM next_steps n)
  ), moved AS (
    -- A run that goes on: seq only (a HOT update, runsTouch); a run that ends: as runsFinish ends it.
    UPDATE runs r SET seq = r.seq + 1,
                      status = CASE WHEN p.next_id IS NULL THEN 'completed' ELSE r.status END,
                      error = CASE WHEN p.next_id IS NULL THEN NULL ELSE r.error END,
                      finished_at = CASE WHEN p.next_id IS NULL THEN now() ELSE r.finished_at END,
                      updated_at = CASE WHEN p.next_id IS NULL THEN now() ELSE r.updated_at END,
                      held_at = CASE WHEN p.next_id IS NULL THEN NULL ELSE r.held_at END
    FROM applied p WHERE r.id = p.run_id AND r.status = 'running'
  ), events AS (
    -- The timeline in each run's order: the firing, then the walk's row (the next step scheduled, or the end).
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    SELECT e.org_id, e.run_id, e.step_id, e.node_id, NULL, e.type, e.lane, p_by, e.data FROM (
      SELECT f.org_id, f.run_id, f.step_id, NULL::text AS node_id, 'timer.fired' AS type, NULL::text AS lane,
             jsonb_build_object('timerId', f.id, 'dueAt', f.due_at, 'latenessMs', round(f.lateness_ms::numeric, 1)) AS data, 1 AS n
      FROM fired f
      UNION ALL
      SELECT p.org_id, p.run_id, p.next_id, p.next_node, 'step.scheduled', p.plan -> 'next' ->> 'lane',
             jsonb_build_object('iteration', p.next_iteration), 2
      FROM applied p WHERE p.next_id IS NOT NULL
      UNION ALL
      SELECT p.org_id, p.run_id, NULL, p.plan ->> 'end', 'run.completed', NULL, NULL, 2
      FROM applied p WHERE p.next_id IS NULL
    ) e ORDER BY e.run_id, e.n
  ), wakeups AS (
    INSERT INTO outbox (org_id, run_id, topic, payload)
    SELECT p.org_id, p.run_id, 'step.ready',
           jsonb_build_object('orgId', p.org_id, 'runId', p.run_id, 'stepId', p.next_id, 'lane', p.plan -> 'next' ->> 'lane')
    FROM applied p WHERE p.next_id IS NOT NULL ORDER BY p.run_id
  ), moves AS MATERIALIZED (
    -- The steps' journey count changes, each as holdfast_count_step makes it for a row (test runs count nothing): a
    -- wait settled here leaves "now" for "passed" at its run's version (as its lock found the run) and its node (as
    -- the update found the step), and a next step that went in enters "now". A wait whose run another transaction
    -- held is counted after this statement (`unlocked`). Then the runs this statement ends (`moved`), as
    -- holdfast_count_run counts a run's end (none is a test run: `applies`).
    SELECT x.org_id, x.version_id, x.settled_node AS node_id, 'now'::text AS from_bucket, 'passed'::text AS to_bucket
    FROM settled x WHERE x.version_id IS NOT NULL AND NOT x.test
    UNION ALL
    SELECT p.org_id, p.version_id, p.next_node, NULL, 'now' FROM applied p WHERE p.next_id IS NOT NULL
    UNION ALL
    -- A run this statement ends, as holdfast_count_run counts it (node '', 'completed'): its trigger stands aside
    -- while holdfast.count_run_end_by_statement is on (20261216100000_count_run_end_by_statement).
    SELECT p.org_id, p.version_id, '', NULL, 'completed' FROM applied p WHERE p.next_id IS NULL
  ), moves_summed AS (
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    SELECT m.org_id, m.version_id, m.node_id, m.from_bucket, m.to_bucket, count(*) FROM moves m WHERE p_tally
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ), moves_unsummed AS (
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT m.org_id, m.version_id, NULL, m.node_id, m.from_bucket, m.to_bucket FROM moves m WHERE NOT p_tally
  ), unlocked AS MATERIALIZED (
    -- The waits settled here whose run another transaction held: this statement read nothing of that run, and the
    -- holder (a migration) may move it to another version before it lets go. Kept for the count after the statement.
    SELECT set_config('holdfast.count_unlocked', COALESCE(jsonb_agg(x.step_id), '[]'::jsonb)::text, true) AS kept
    FROM settled x WHERE x.version_id IS NULL
  ), edges AS MATERIALIZED (
    SELECT p.org_id, p.version_id, p.run_id, e."nodeId", e.bucket, e.run IS NOT FALSE AS named, e.n
    FROM applied p, ROWS FROM (jsonb_to_recordset(p.plan -> 'edges') AS ("nodeId" text, bucket text, run boolean)) WITH ORDINALITY AS e("nodeId", bucket, run, n)
  ), edges_named AS (
    -- An edge that leaves a split names its run (a plan learnt by a previous release has no "run": named).
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
    SELECT e.org_id, e.version_id, e.run_id, e."nodeId", e.bucket FROM edges e WHERE e.named ORDER BY e.run_id, e.n
  ), edges_summed AS (
    -- Any other: no run; summed when the batch tallies (one row per version, node and edge), else a row each.
    INSERT INTO count_tallies (org_id, version_id, node_id, to_bucket, n)
    SELECT e.org_id, e.version_id, e."nodeId", e.bucket, count(*) FROM edges e WHERE NOT e.named AND p_tally
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ), edges_unsummed AS (
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
    SELECT e.org_id, e.version_id, NULL, e."nodeId", e.bucket FROM edges e WHERE NOT e.named AND NOT p_tally ORDER BY e.run_id, e.n
  )
  SELECT x.id, x.wake, x.org_id, x.run_id, x.step_id, x.lateness_ms::float8, x.version_id, x.node_id,
         CASE WHEN x.applies IS NOT TRUE OR x.id NOT IN (SELECT a.id FROM applied a) THEN NULL WHEN jsonb_typeof(x.plan -> 'next') = 'object' THEN 'running' ELSE 'completed' END
  FROM facts x
  WHERE (SELECT u.kept FROM unlocked u) IS NOT NULL
  ORDER BY x.run_id, x.id;
  PERFORM set_config('holdfast.count_by_statement', COALESCE(prior, ''), true),
          set_config('holdfast.count_run_end_by_statement', '', true);
  -- The waits of `unlocked`, counted as holdfast_count_step counts a row, with their steps and runs as they are now (a
  -- statement of its own: its snapshot sees what their runs' holders committed meanwhile).
  IF current_setting('holdfast.count_unlocked') <> '[]' THEN
    PERFORM holdfast_count_change(s.org_id, r.version_id, s.node_id, 'now', 'passed')
    FROM jsonb_array_elements_text(current_setting('holdfast.count_unlocked')::jsonb) AS u(step_id)
    JOIN steps s ON s.id = u.step_id
    JOIN runs r ON r.id = s.run_id AND NOT r.test;
  END IF;
  -- The statement's row triggers have fired: what they collected is written now, in this transaction.
  IF p_tally THEN
    PERFORM holdfast_count_tally_flush();
  END IF;
END;
$$;

CREATE TABLE public._holdfast_migrations (
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.approval_edits (
    id text DEFAULT public.holdfast_ordered_id('aed_'::text) NOT NULL,
    org_id text NOT NULL,
    approval_id text NOT NULL,
    original_subject text NOT NULL,
    original_text text,
    edited_subject text NOT NULL,
    edited_text text NOT NULL,
    had_html boolean DEFAULT false NOT NULL,
    edited_by text NOT NULL,
    edited_by_name text NOT NULL,
    via text NOT NULL,
    digest_before text NOT NULL,
    digest_after text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    CONSTRAINT approval_edits_changed_check CHECK ((digest_before <> digest_after)),
    CONSTRAINT approval_edits_via_check CHECK ((via = ANY (ARRAY['inbox'::text, 'slack'::text])))
);

ALTER TABLE ONLY public.approval_edits FORCE ROW LEVEL SECURITY;

CREATE TABLE public.approvals (
    id text DEFAULT ('apr_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    run_id text NOT NULL,
    step_id text NOT NULL,
    node_id text NOT NULL,
    stage integer DEFAULT 1 NOT NULL,
    approvers jsonb NOT NULL,
    title text NOT NULL,
    content text NOT NULL,
    digest text NOT NULL,
    deadline_at timestamp(6) with time zone NOT NULL,
    on_deadline jsonb NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    decided_by text,
    decided_by_name text,
    decided_via text,
    decided_at timestamp(6) with time zone,
    slack jsonb,
    slack_message jsonb,
    notify_state text DEFAULT 'none'::text NOT NULL,
    notify_error text,
    notify_attempted_at timestamp(6) with time zone,
    revision integer DEFAULT 1 NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    email_digest jsonb,
    email_draft jsonb,
    CONSTRAINT approvals_decided_check CHECK (((status = 'pending'::text) = (decided_at IS NULL))),
    CONSTRAINT approvals_email_draft_check CHECK (((email_draft IS NULL) OR (jsonb_typeof(email_draft) = 'object'::text))),
    CONSTRAINT approvals_notify_check CHECK ((notify_state = ANY (ARRAY['none'::text, 'post'::text, 'update'::text, 'done'::text, 'failed'::text]))),
    CONSTRAINT approvals_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'rejected'::text, 'escalated'::text, 'expired'::text, 'cancelled'::text]))),
    CONSTRAINT approvals_via_check CHECK (((decided_via IS NULL) OR (decided_via = ANY (ARRAY['slack'::text, 'inbox'::text, 'deadline'::text, 'run'::text, 'test'::text]))))
);

ALTER TABLE ONLY public.approvals FORCE ROW LEVEL SECURITY;

CREATE TABLE public.automation_drafts (
    automation_id text NOT NULL,
    org_id text NOT NULL,
    graph jsonb NOT NULL,
    revision integer DEFAULT 1 NOT NULL,
    updated_by text,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

ALTER TABLE ONLY public.automation_drafts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.automation_history (
    id text DEFAULT ('ahi_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    seq bigint NOT NULL,
    org_id text NOT NULL,
    automation_id text NOT NULL,
    at timestamp(6) with time zone DEFAULT now() NOT NULL,
    by text NOT NULL,
    action text NOT NULL,
    from_status text NOT NULL,
    to_status text NOT NULL,
    pause_mode text,
    pause_runs text,
    reason text,
    detail jsonb,
    CONSTRAINT automation_history_action_check CHECK ((action = ANY (ARRAY['pause'::text, 'resume'::text, 'archive'::text, 'restore'::text, 'stop_runs'::text, 'fire_wait'::text]))),
    CONSTRAINT automation_history_sizes_check CHECK (((length(by) <= 200) AND (length(reason) <= 500)))
);

ALTER TABLE ONLY public.automation_history FORCE ROW LEVEL SECURITY;

ALTER TABLE public.automation_history ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.automation_history_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.automation_versions (
    id text DEFAULT ('ver_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    automation_id text NOT NULL,
    version integer NOT NULL,
    graph jsonb NOT NULL,
    published_at timestamp(6) with time zone,
    published_by text,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT automation_versions_version_check CHECK ((version >= 1))
);

ALTER TABLE ONLY public.automation_versions FORCE ROW LEVEL SECURITY;

CREATE TABLE public.automations (
    id text DEFAULT ('aut_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    slug text NOT NULL,
    name text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    run_max_steps integer,
    run_max_age_seconds integer,
    trigger_auth text DEFAULT 'signed'::text NOT NULL,
    sample_input jsonb,
    status text DEFAULT 'active'::text NOT NULL,
    pause_mode text,
    pause_runs text,
    status_changed_at timestamp(6) with time zone,
    track_opens boolean DEFAULT false NOT NULL,
    goal text,
    quiet_hours jsonb,
    transactional boolean DEFAULT false NOT NULL,
    capped_action text DEFAULT 'wait'::text NOT NULL,
    CONSTRAINT automations_capped_action_check CHECK ((capped_action = ANY (ARRAY['wait'::text, 'skip'::text]))),
    CONSTRAINT automations_goal_check CHECK (((goal IS NULL) OR (goal = ANY (ARRAY['replied'::text, 'clicked'::text, 'event'::text])))),
    CONSTRAINT automations_pause_check CHECK ((((status = 'paused'::text) = (pause_mode IS NOT NULL)) AND ((pause_mode IS NULL) = (pause_runs IS NULL)) AND ((pause_mode IS NULL) OR (pause_mode = ANY (ARRAY['refuse'::text, 'hold'::text]))) AND ((pause_runs IS NULL) OR (pause_runs = ANY (ARRAY['continue'::text, 'hold'::text]))))),
    CONSTRAINT automations_quiet_hours_check CHECK (((quiet_hours IS NULL) OR (jsonb_typeof(quiet_hours) = 'object'::text))),
    CONSTRAINT automations_run_budget_check CHECK ((((run_max_steps IS NULL) OR (run_max_steps >= 1)) AND ((run_max_age_seconds IS NULL) OR (run_max_age_seconds >= 1)))),
    CONSTRAINT automations_sample_input_check CHECK (((sample_input IS NULL) OR (jsonb_typeof(sample_input) = 'object'::text))),
    CONSTRAINT automations_status_check CHECK ((status = ANY (ARRAY['active'::text, 'paused'::text, 'archived'::text]))),
    CONSTRAINT automations_trigger_auth_check CHECK ((trigger_auth = ANY (ARRAY['signed'::text, 'url_token'::text])))
);

ALTER TABLE ONLY public.automations FORCE ROW LEVEL SECURITY;

CREATE TABLE public.budget_reservations (
    org_id text NOT NULL,
    key text NOT NULL,
    owner text NOT NULL,
    micros bigint NOT NULL,
    actual_micros bigint,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    settled_at timestamp(6) with time zone
);

ALTER TABLE ONLY public.budget_reservations FORCE ROW LEVEL SECURITY;

CREATE TABLE public.connection_notices (
    id text DEFAULT ('ntc_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    connection_id text NOT NULL,
    break_no integer NOT NULL,
    reason text,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    resolved_at timestamp(6) with time zone,
    email_status text DEFAULT 'pending'::text NOT NULL,
    email_attempts integer DEFAULT 0 NOT NULL,
    email_claimed_until timestamp(6) with time zone,
    email_sent_at timestamp(6) with time zone,
    email_to text[],
    email_error text,
    CONSTRAINT connection_notices_email_status_check CHECK ((email_status = ANY (ARRAY['pending'::text, 'sending'::text, 'sent'::text, 'skipped'::text, 'failed'::text])))
);

ALTER TABLE ONLY public.connection_notices FORCE ROW LEVEL SECURITY;

CREATE TABLE public.connection_slots (
    connection_id text NOT NULL,
    slot integer NOT NULL,
    org_id text NOT NULL,
    holder text,
    lease_until timestamp(6) with time zone,
    CONSTRAINT connection_slots_lease_check CHECK (((holder IS NULL) = (lease_until IS NULL)))
);

ALTER TABLE ONLY public.connection_slots FORCE ROW LEVEL SECURITY;

CREATE TABLE public.connections (
    id text DEFAULT ('cnx_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    config jsonb DEFAULT '{}'::jsonb NOT NULL,
    secret text,
    status text DEFAULT 'ok'::text NOT NULL,
    status_reason text,
    checked_at timestamp(6) with time zone,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    limits jsonb DEFAULT '{}'::jsonb NOT NULL,
    breaker_state text DEFAULT 'closed'::text NOT NULL,
    breaker_opened_at timestamp(6) with time zone,
    breaker_probe text,
    window_started_at timestamp(6) with time zone,
    window_calls integer DEFAULT 0 NOT NULL,
    window_failures integer DEFAULT 0 NOT NULL,
    break_count integer DEFAULT 0 NOT NULL,
    CONSTRAINT connections_breaker_check CHECK ((breaker_state = ANY (ARRAY['closed'::text, 'open'::text, 'half_open'::text]))),
    CONSTRAINT connections_kind_check CHECK ((kind = ANY (ARRAY['smtp'::text, 'crm'::text, 'model'::text, 'slack'::text, 'http'::text]))),
    CONSTRAINT connections_status_check CHECK ((status = ANY (ARRAY['ok'::text, 'needs_reconnect'::text])))
);

ALTER TABLE ONLY public.connections FORCE ROW LEVEL SECURITY;

CREATE TABLE public.contact_sends (
    id text DEFAULT public.holdfast_ordered_id('csd_'::text) NOT NULL,
    org_id text NOT NULL,
    address text NOT NULL,
    effect_key text NOT NULL,
    automation_id text NOT NULL,
    run_id text NOT NULL,
    step_id text NOT NULL,
    sent_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    released_at timestamp(6) with time zone,
    CONSTRAINT contact_sends_address_check CHECK ((address = lower(address)))
);

ALTER TABLE ONLY public.contact_sends FORCE ROW LEVEL SECURITY;

CREATE TABLE public.contacts (
    id text DEFAULT ('ctc_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    email text NOT NULL,
    time_zone text,
    consent text DEFAULT 'unknown'::text NOT NULL,
    consent_changed_at timestamp(6) with time zone,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    attributes jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT contacts_attributes_check CHECK (((jsonb_typeof(attributes) = 'object'::text) AND (octet_length((attributes)::text) <= 65536))),
    CONSTRAINT contacts_consent_check CHECK ((consent = ANY (ARRAY['granted'::text, 'unknown'::text, 'withdrawn'::text]))),
    CONSTRAINT contacts_email_lower_check CHECK ((email = lower(email)))
);

ALTER TABLE ONLY public.contacts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.count_changes (
    org_id text NOT NULL,
    version_id text NOT NULL,
    run_id text,
    node_id text DEFAULT ''::text NOT NULL,
    from_bucket text,
    to_bucket text,
    at timestamp(6) with time zone DEFAULT now() NOT NULL,
    CONSTRAINT count_changes_bucket_check CHECK (((from_bucket IS NOT NULL) OR (to_bucket IS NOT NULL)))
);

ALTER TABLE ONLY public.count_changes FORCE ROW LEVEL SECURITY;

CREATE TABLE public.count_tallies (
    org_id text NOT NULL,
    version_id text NOT NULL,
    node_id text DEFAULT ''::text NOT NULL,
    from_bucket text,
    to_bucket text,
    n integer NOT NULL,
    at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT count_tallies_bucket_check CHECK (((from_bucket IS NOT NULL) OR (to_bucket IS NOT NULL))),
    CONSTRAINT count_tallies_n_check CHECK ((n > 0))
);

ALTER TABLE ONLY public.count_tallies FORCE ROW LEVEL SECURITY;

CREATE TABLE public.deployment_settings (
    id smallint DEFAULT 1 NOT NULL,
    key_check text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    CONSTRAINT deployment_settings_id_check CHECK ((id = 1))
);

CREATE TABLE public.effects (
    org_id text NOT NULL,
    run_id text NOT NULL,
    step_id text NOT NULL,
    key text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    owner text,
    lease_until timestamp(6) with time zone,
    attempts integer DEFAULT 1 NOT NULL,
    provider_idempotent boolean,
    result jsonb,
    error jsonb,
    first_attempt_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    settled_at timestamp(6) with time zone,
    started_at timestamp(6) with time zone,
    CONSTRAINT effects_lease_check CHECK (((status = 'in_flight'::text) = ((lease_until IS NOT NULL) AND (owner IS NOT NULL)))),
    CONSTRAINT effects_status_check CHECK ((status = ANY (ARRAY['in_flight'::text, 'settled'::text, 'outcome_unknown'::text, 'needs_review'::text])))
)
WITH (fillfactor='50');

ALTER TABLE ONLY public.effects FORCE ROW LEVEL SECURITY;

CREATE TABLE public.email_messages (
    org_id text NOT NULL,
    effect_key text NOT NULL,
    automation_id text NOT NULL,
    version_id text NOT NULL,
    run_id text NOT NULL,
    step_id text NOT NULL,
    node_id text NOT NULL,
    message_id text NOT NULL,
    recipient text NOT NULL,
    sent_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    delivered_at timestamp(6) with time zone,
    bounced_at timestamp(6) with time zone,
    bounce_count integer DEFAULT 0 NOT NULL,
    bounce_status text,
    bounce_detail text,
    opened_at timestamp(6) with time zone,
    open_count integer DEFAULT 0 NOT NULL,
    clicked_at timestamp(6) with time zone,
    click_count integer DEFAULT 0 NOT NULL,
    replied_at timestamp(6) with time zone,
    reply_count integer DEFAULT 0 NOT NULL,
    unsubscribed_at timestamp(6) with time zone,
    CONSTRAINT email_messages_counts_check CHECK ((((opened_at IS NULL) = (open_count = 0)) AND ((clicked_at IS NULL) = (click_count = 0)) AND ((replied_at IS NULL) = (reply_count = 0)) AND ((bounced_at IS NULL) = (bounce_count = 0))))
);

ALTER TABLE ONLY public.email_messages FORCE ROW LEVEL SECURITY;

CREATE TABLE public.email_templates (
    id text DEFAULT public.holdfast_ordered_id('etp_'::text) NOT NULL,
    org_id text NOT NULL,
    name text NOT NULL,
    subject text NOT NULL,
    text text NOT NULL,
    html text,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    created_by text NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    updated_by text NOT NULL,
    CONSTRAINT email_templates_html_check CHECK (((html IS NULL) OR (length(html) <= 200000))),
    CONSTRAINT email_templates_name_check CHECK ((((length(btrim(name)) >= 1) AND (length(btrim(name)) <= 100)) AND (name = btrim(name)))),
    CONSTRAINT email_templates_subject_check CHECK (((length(subject) >= 1) AND (length(subject) <= 1000))),
    CONSTRAINT email_templates_text_check CHECK ((length(text) <= 100000))
);

ALTER TABLE ONLY public.email_templates FORCE ROW LEVEL SECURITY;

CREATE TABLE public.goal_events (
    id text DEFAULT public.holdfast_ordered_id('gev_'::text) NOT NULL,
    org_id text NOT NULL,
    automation_id text NOT NULL,
    contact_id text NOT NULL,
    goal text NOT NULL,
    webhook_id text,
    runs_ended integer DEFAULT 0 NOT NULL,
    met_at timestamp(6) with time zone NOT NULL,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    CONSTRAINT goal_events_goal_check CHECK ((goal = ANY (ARRAY['replied'::text, 'clicked'::text, 'event'::text]))),
    CONSTRAINT goal_events_runs_ended_check CHECK ((runs_ended >= 0))
);

ALTER TABLE ONLY public.goal_events FORCE ROW LEVEL SECURITY;

CREATE TABLE public.invitations (
    id text DEFAULT public.holdfast_ordered_id('inv_'::text) NOT NULL,
    org_id text NOT NULL,
    email text NOT NULL,
    email_typed text NOT NULL,
    role text NOT NULL,
    invited_by text,
    token_hash text,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    expires_at timestamp(6) with time zone NOT NULL,
    accepted_at timestamp(6) with time zone,
    accepted_by text,
    declined_at timestamp(6) with time zone,
    revoked_at timestamp(6) with time zone,
    email_status text,
    email_attempts integer DEFAULT 0 NOT NULL,
    email_claimed_until timestamp(6) with time zone,
    email_sent_at timestamp(6) with time zone,
    email_problem text,
    link_base text,
    CONSTRAINT invitations_email_lower_check CHECK (((email = lower(email)) AND (lower(email_typed) = email))),
    CONSTRAINT invitations_email_problem_check CHECK ((email_problem = ANY (ARRAY['no_mailbox'::text, 'egress_refused'::text, 'unreachable'::text, 'login_refused'::text, 'address_refused'::text, 'message_refused'::text, 'unknown'::text]))),
    CONSTRAINT invitations_email_state_check CHECK ((((email_claimed_until IS NULL) OR (email_status = 'sending'::text)) AND ((email_sent_at IS NULL) OR (email_status = 'sent'::text)) AND ((email_problem IS NULL) OR (email_status = ANY (ARRAY['pending'::text, 'failed'::text]))) AND ((email_status IS NOT NULL) OR (email_attempts = 0)))),
    CONSTRAINT invitations_email_status_check CHECK ((email_status = ANY (ARRAY['pending'::text, 'sending'::text, 'sent'::text, 'failed'::text]))),
    CONSTRAINT invitations_end_check CHECK (((num_nonnulls(accepted_at, declined_at, revoked_at) <= 1) AND ((accepted_by IS NULL) OR (accepted_at IS NOT NULL)))),
    CONSTRAINT invitations_expiry_check CHECK ((expires_at > created_at)),
    CONSTRAINT invitations_link_base_check CHECK ((link_base ~ '^https?://'::text)),
    CONSTRAINT invitations_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'editor'::text, 'approver'::text, 'viewer'::text]))),
    CONSTRAINT invitations_token_hash_check CHECK ((token_hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT invitations_token_owed_check CHECK (((token_hash IS NOT NULL) OR (email_status = 'pending'::text)))
);

ALTER TABLE ONLY public.invitations FORCE ROW LEVEL SECURITY;

CREATE TABLE public.journey_counts (
    org_id text NOT NULL,
    automation_id text NOT NULL,
    version_id text NOT NULL,
    node_id text NOT NULL,
    bucket text NOT NULL,
    day date NOT NULL,
    n bigint NOT NULL
);

ALTER TABLE ONLY public.journey_counts FORCE ROW LEVEL SECURITY;

CREATE TABLE public.leader_leases (
    name text NOT NULL,
    owner text NOT NULL,
    lease_until timestamp(6) with time zone NOT NULL,
    acquired_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

CREATE TABLE public.memberships (
    org_id text NOT NULL,
    user_id text NOT NULL,
    role text NOT NULL,
    slack_user_id text,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT memberships_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'editor'::text, 'approver'::text, 'viewer'::text])))
);

ALTER TABLE ONLY public.memberships FORCE ROW LEVEL SECURITY;

CREATE TABLE public.org_budgets (
    org_id text NOT NULL,
    allowed_micros bigint NOT NULL,
    reserved_micros bigint DEFAULT 0 NOT NULL,
    spent_micros bigint DEFAULT 0 NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    period_start date DEFAULT (date_trunc('month'::text, (now() AT TIME ZONE 'UTC'::text)))::date NOT NULL,
    CONSTRAINT org_budgets_amounts_check CHECK (((allowed_micros >= 0) AND (reserved_micros >= 0) AND (spent_micros >= 0)))
);

ALTER TABLE ONLY public.org_budgets FORCE ROW LEVEL SECURITY;

CREATE TABLE public.organisations (
    id text DEFAULT ('org_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    slug text NOT NULL,
    name text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    last_timer_served_at timestamp(6) with time zone,
    run_max_steps integer DEFAULT 1000 NOT NULL,
    run_max_age_seconds integer DEFAULT 7776000 NOT NULL,
    CONSTRAINT organisations_run_budget_check CHECK (((run_max_steps >= 1) AND (run_max_age_seconds >= 1)))
);

CREATE TABLE public.outbox (
    id bigint NOT NULL,
    org_id text NOT NULL,
    run_id text,
    topic text NOT NULL,
    payload jsonb NOT NULL,
    available_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    sent_at timestamp(6) with time zone
);

ALTER TABLE ONLY public.outbox FORCE ROW LEVEL SECURITY;

CREATE SEQUENCE public.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.outbox_id_seq OWNED BY public.outbox.id;

CREATE TABLE public.run_events (
    id bigint NOT NULL,
    org_id text NOT NULL,
    run_id text NOT NULL,
    step_id text,
    node_id text,
    attempt integer,
    type text NOT NULL,
    lane text,
    worker text,
    data jsonb,
    at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

ALTER TABLE ONLY public.run_events FORCE ROW LEVEL SECURITY;

CREATE SEQUENCE public.run_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.run_events_id_seq OWNED BY public.run_events.id;

CREATE TABLE public.run_migrations (
    id text DEFAULT ('mig_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    automation_id text NOT NULL,
    from_version_id text NOT NULL,
    to_version_id text NOT NULL,
    mapping jsonb NOT NULL,
    removed_rule jsonb NOT NULL,
    status text DEFAULT 'open'::text NOT NULL,
    migrated integer DEFAULT 0 NOT NULL,
    cancelled integer DEFAULT 0 NOT NULL,
    stayed integer DEFAULT 0 NOT NULL,
    deferred integer DEFAULT 0 NOT NULL,
    created_by text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT run_migrations_status_check CHECK ((status = ANY (ARRAY['open'::text, 'done'::text])))
);

ALTER TABLE ONLY public.run_migrations FORCE ROW LEVEL SECURITY;

CREATE TABLE public.run_split_paths (
    org_id text NOT NULL,
    run_id text NOT NULL,
    version_id text NOT NULL,
    node_id text NOT NULL,
    path text NOT NULL
);

ALTER TABLE ONLY public.run_split_paths FORCE ROW LEVEL SECURITY;

CREATE TABLE public.runs (
    id text DEFAULT public.holdfast_ordered_id('run_'::text) NOT NULL,
    org_id text NOT NULL,
    automation_id text NOT NULL,
    version_id text NOT NULL,
    start_key text NOT NULL,
    status text DEFAULT 'running'::text NOT NULL,
    input jsonb NOT NULL,
    error jsonb,
    cancel_requested_at timestamp(6) with time zone,
    cancel_reason text,
    swept_at timestamp(6) with time zone,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    finished_at timestamp(6) with time zone,
    seq bigint DEFAULT 0 NOT NULL,
    contact_id text,
    max_steps integer,
    expires_at timestamp(6) with time zone,
    test boolean DEFAULT false NOT NULL,
    held_at timestamp(6) with time zone,
    rerun_of text,
    duplicate_deliveries integer DEFAULT 0 NOT NULL,
    last_duplicate_at timestamp(6) with time zone,
    timeline_removed_at timestamp(6) with time zone,
    goal_met text,
    CONSTRAINT runs_duplicate_deliveries_check CHECK ((duplicate_deliveries >= 0)),
    CONSTRAINT runs_finished_check CHECK (((status = 'running'::text) = (finished_at IS NULL))),
    CONSTRAINT runs_goal_met_check CHECK ((((goal_met IS NULL) OR ((goal_met = ANY (ARRAY['replied'::text, 'clicked'::text, 'event'::text])) AND (cancel_requested_at IS NOT NULL))) AND ((status = 'converted'::text) <= (goal_met IS NOT NULL)))),
    CONSTRAINT runs_held_check CHECK (((held_at IS NULL) OR (status = 'running'::text))),
    CONSTRAINT runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'completed'::text, 'failed'::text, 'cancelled'::text, 'converted'::text])))
)
WITH (fillfactor='80');

ALTER TABLE ONLY public.runs FORCE ROW LEVEL SECURITY;

CREATE TABLE public.sending_rules (
    org_id text NOT NULL,
    quiet_hours jsonb,
    frequency_cap jsonb,
    updated_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    updated_by text,
    CONSTRAINT sending_rules_frequency_cap_check CHECK (((frequency_cap IS NULL) OR (jsonb_typeof(frequency_cap) = 'object'::text))),
    CONSTRAINT sending_rules_quiet_hours_check CHECK (((quiet_hours IS NULL) OR (jsonb_typeof(quiet_hours) = 'object'::text)))
);

ALTER TABLE ONLY public.sending_rules FORCE ROW LEVEL SECURITY;

CREATE TABLE public.sessions (
    id text NOT NULL,
    user_id text NOT NULL,
    expires_at timestamp(6) with time zone NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    idle_expires_at timestamp(6) with time zone NOT NULL
);

CREATE TABLE public.signals (
    id text DEFAULT ('sig_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    kind text NOT NULL,
    identity text NOT NULL,
    correlation_keys text[] DEFAULT '{}'::text[] NOT NULL,
    payload jsonb NOT NULL,
    received_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    consumed_at timestamp(6) with time zone,
    run_id text,
    step_id text,
    sender text,
    unmatched_reason text,
    CONSTRAINT signals_consumed_check CHECK (((consumed_at IS NULL) = (step_id IS NULL))),
    CONSTRAINT signals_kind_check CHECK ((kind = ANY (ARRAY['email_reply'::text, 'approval'::text]))),
    CONSTRAINT signals_unmatched_check CHECK (((unmatched_reason IS NULL) OR (consumed_at IS NULL)))
);

ALTER TABLE ONLY public.signals FORCE ROW LEVEL SECURITY;

CREATE TABLE public.signin_throttle (
    key text NOT NULL,
    points integer DEFAULT 0 NOT NULL,
    expire bigint
);

CREATE TABLE public.slack_install_states (
    id text NOT NULL,
    org_id text NOT NULL,
    user_id text NOT NULL,
    session_id text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    expires_at timestamp(6) with time zone NOT NULL,
    used_at timestamp(6) with time zone,
    CONSTRAINT slack_install_states_expiry_check CHECK (((expires_at > created_at) AND (expires_at <= (created_at + '01:00:00'::interval))))
);

ALTER TABLE ONLY public.slack_install_states FORCE ROW LEVEL SECURITY;

CREATE TABLE public.steps (
    id text DEFAULT public.holdfast_ordered_id('stp_'::text) NOT NULL,
    org_id text NOT NULL,
    run_id text NOT NULL,
    node_id text NOT NULL,
    iteration integer NOT NULL,
    kind text NOT NULL,
    lane text NOT NULL,
    status text DEFAULT 'ready'::text NOT NULL,
    attempt integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    owner text,
    lease_until timestamp(6) with time zone,
    available_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    output jsonb,
    error jsonb,
    advanced_at timestamp(6) with time zone,
    woken_at timestamp(6) with time zone,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    settled_at timestamp(6) with time zone,
    deferrals integer DEFAULT 0 NOT NULL,
    correlation_key text,
    CONSTRAINT steps_attempt_check CHECK (((attempt >= 0) AND (max_attempts >= 1))),
    CONSTRAINT steps_iteration_check CHECK ((iteration >= 1)),
    CONSTRAINT steps_lease_check CHECK (
CASE
    WHEN (status = 'running'::text) THEN ((lease_until IS NOT NULL) AND (owner IS NOT NULL))
    ELSE ((lease_until IS NULL) AND (owner IS NULL))
END),
    CONSTRAINT steps_status_check CHECK ((status = ANY (ARRAY['ready'::text, 'running'::text, 'waiting'::text, 'parked'::text, 'done'::text, 'failed'::text, 'cancelled'::text])))
)
WITH (fillfactor='85');

ALTER TABLE ONLY public.steps FORCE ROW LEVEL SECURITY;

CREATE TABLE public.suppressions (
    org_id text NOT NULL,
    email text NOT NULL,
    reason text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT suppressions_email_lower_check CHECK ((email = lower(email)))
);

ALTER TABLE ONLY public.suppressions FORCE ROW LEVEL SECURITY;

CREATE TABLE public.test_runs (
    run_id text NOT NULL,
    org_id text NOT NULL,
    started_by text NOT NULL,
    script jsonb DEFAULT '{}'::jsonb NOT NULL,
    send_to text,
    contact jsonb,
    clock_offset_ms bigint DEFAULT 0 NOT NULL,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    CONSTRAINT test_runs_clock_check CHECK ((clock_offset_ms >= 0)),
    CONSTRAINT test_runs_send_to_check CHECK (((send_to IS NULL) OR (send_to ~ '^[^\s@,;<>"()]+@[^\s@,;<>"()]+$'::text)))
);

ALTER TABLE ONLY public.test_runs FORCE ROW LEVEL SECURITY;

CREATE TABLE public.timers (
    id text DEFAULT public.holdfast_ordered_id('tmr_'::text) NOT NULL,
    org_id text NOT NULL,
    run_id text NOT NULL,
    step_id text NOT NULL,
    rule jsonb NOT NULL,
    zone text NOT NULL,
    spread_seconds integer DEFAULT 0 NOT NULL,
    spread_offset_seconds integer DEFAULT 0 NOT NULL,
    anchor_at timestamp(6) with time zone NOT NULL,
    due_at timestamp(6) with time zone NOT NULL,
    wake integer DEFAULT 1 NOT NULL,
    fired_at timestamp(6) with time zone,
    fired_by text,
    lateness_ms double precision,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    zone_source text,
    CONSTRAINT timers_fired_check CHECK (((fired_at IS NULL) = (lateness_ms IS NULL))),
    CONSTRAINT timers_spread_check CHECK (((spread_seconds >= 0) AND (spread_offset_seconds >= 0) AND (wake >= 1))),
    CONSTRAINT timers_zone_source_check CHECK (((zone_source IS NULL) OR (zone_source = ANY (ARRAY['run'::text, 'contact'::text, 'node'::text, 'default'::text]))))
);

ALTER TABLE ONLY public.timers FORCE ROW LEVEL SECURITY;

CREATE TABLE public.trigger_credentials (
    id text DEFAULT ('tcr_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    org_id text NOT NULL,
    automation_id text NOT NULL,
    kind text NOT NULL,
    secret text NOT NULL,
    created_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    expires_at timestamp(6) with time zone,
    CONSTRAINT trigger_credentials_kind_check CHECK ((kind = ANY (ARRAY['signing_secret'::text, 'url_token'::text, 'goal_signing_secret'::text, 'goal_url_token'::text])))
);

ALTER TABLE ONLY public.trigger_credentials FORCE ROW LEVEL SECURITY;

CREATE TABLE public.trigger_deliveries (
    id text DEFAULT ('dlv_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    seq bigint NOT NULL,
    org_id text NOT NULL,
    automation_id text NOT NULL,
    received_at timestamp(6) with time zone DEFAULT now() NOT NULL,
    outcome text NOT NULL,
    status integer NOT NULL,
    reason text,
    start_key text,
    webhook_id text,
    run_id text,
    content_type text,
    body_bytes integer,
    CONSTRAINT trigger_deliveries_outcome_check CHECK ((outcome = ANY (ARRAY['accepted'::text, 'duplicate'::text, 'refused'::text]))),
    CONSTRAINT trigger_deliveries_refusal_check CHECK ((((outcome = 'refused'::text) AND (reason IS NOT NULL) AND (run_id IS NULL) AND (start_key IS NULL)) OR (outcome <> 'refused'::text))),
    CONSTRAINT trigger_deliveries_sizes_check CHECK ((((body_bytes IS NULL) OR (body_bytes >= 0)) AND ((status >= 100) AND (status <= 599)) AND (length(reason) <= 500) AND (length(content_type) <= 100) AND (length(webhook_id) <= 300) AND (length(start_key) <= 400)))
);

ALTER TABLE ONLY public.trigger_deliveries FORCE ROW LEVEL SECURITY;

ALTER TABLE public.trigger_deliveries ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.trigger_deliveries_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.users (
    id text DEFAULT ('usr_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    email text NOT NULL,
    name text NOT NULL,
    password_hash text,
    created_at timestamp(6) with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    CONSTRAINT users_email_lower_check CHECK ((email = lower(email)))
);

ALTER TABLE ONLY public.outbox ALTER COLUMN id SET DEFAULT nextval('public.outbox_id_seq'::regclass);

ALTER TABLE ONLY public.run_events ALTER COLUMN id SET DEFAULT nextval('public.run_events_id_seq'::regclass);

ALTER TABLE ONLY public._holdfast_migrations
    ADD CONSTRAINT _holdfast_migrations_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.approval_edits
    ADD CONSTRAINT approval_edits_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.automation_drafts
    ADD CONSTRAINT automation_drafts_pkey PRIMARY KEY (automation_id);

ALTER TABLE ONLY public.automation_history
    ADD CONSTRAINT automation_history_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.automation_versions
    ADD CONSTRAINT automation_versions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.automations
    ADD CONSTRAINT automations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.budget_reservations
    ADD CONSTRAINT budget_reservations_pkey PRIMARY KEY (org_id, key, owner);

ALTER TABLE ONLY public.connection_notices
    ADD CONSTRAINT connection_notices_break_key UNIQUE (connection_id, break_no);

ALTER TABLE ONLY public.connection_notices
    ADD CONSTRAINT connection_notices_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.connection_slots
    ADD CONSTRAINT connection_slots_pkey PRIMARY KEY (connection_id, slot);

ALTER TABLE ONLY public.connections
    ADD CONSTRAINT connections_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.contact_sends
    ADD CONSTRAINT contact_sends_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.contacts
    ADD CONSTRAINT contacts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.deployment_settings
    ADD CONSTRAINT deployment_settings_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.effects
    ADD CONSTRAINT effects_pkey PRIMARY KEY (org_id, key);

ALTER TABLE ONLY public.email_messages
    ADD CONSTRAINT email_messages_pkey PRIMARY KEY (org_id, effect_key);

ALTER TABLE ONLY public.email_templates
    ADD CONSTRAINT email_templates_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.goal_events
    ADD CONSTRAINT goal_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.journey_counts
    ADD CONSTRAINT journey_counts_pkey PRIMARY KEY (version_id, node_id, bucket, day);

ALTER TABLE ONLY public.leader_leases
    ADD CONSTRAINT leader_leases_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_pkey PRIMARY KEY (org_id, user_id);

ALTER TABLE ONLY public.org_budgets
    ADD CONSTRAINT org_budgets_pkey PRIMARY KEY (org_id);

ALTER TABLE ONLY public.organisations
    ADD CONSTRAINT organisations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.run_events
    ADD CONSTRAINT run_events_pkey PRIMARY KEY (run_id, id);

ALTER TABLE ONLY public.run_migrations
    ADD CONSTRAINT run_migrations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.run_split_paths
    ADD CONSTRAINT run_split_paths_pkey PRIMARY KEY (run_id, version_id, node_id);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.sending_rules
    ADD CONSTRAINT sending_rules_pkey PRIMARY KEY (org_id);

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.signals
    ADD CONSTRAINT signals_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.signin_throttle
    ADD CONSTRAINT signin_throttle_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.slack_install_states
    ADD CONSTRAINT slack_install_states_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.steps
    ADD CONSTRAINT steps_pkey PRIMARY KEY (id, org_id);

ALTER TABLE ONLY public.suppressions
    ADD CONSTRAINT suppressions_pkey PRIMARY KEY (org_id, email);

ALTER TABLE ONLY public.test_runs
    ADD CONSTRAINT test_runs_pkey PRIMARY KEY (run_id);

ALTER TABLE ONLY public.timers
    ADD CONSTRAINT timers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.timers
    ADD CONSTRAINT timers_step_key UNIQUE (step_id);

ALTER TABLE ONLY public.trigger_credentials
    ADD CONSTRAINT trigger_credentials_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.trigger_deliveries
    ADD CONSTRAINT trigger_deliveries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

CREATE INDEX approval_edits_approval_idx ON public.approval_edits USING btree (org_id, approval_id, created_at);

CREATE INDEX approvals_notify_idx ON public.approvals USING btree (notify_attempted_at) WHERE (notify_state = ANY (ARRAY['post'::text, 'update'::text]));

CREATE UNIQUE INDEX approvals_org_id_id_key ON public.approvals USING btree (org_id, id);

CREATE INDEX approvals_org_status_idx ON public.approvals USING btree (org_id, status, deadline_at);

CREATE UNIQUE INDEX approvals_step_id_key ON public.approvals USING btree (step_id);

CREATE INDEX automation_history_automation_idx ON public.automation_history USING btree (org_id, automation_id, seq DESC);

CREATE UNIQUE INDEX automation_versions_automation_id_version_key ON public.automation_versions USING btree (automation_id, version);

CREATE INDEX automation_versions_org_id_automation_id_published_at_idx ON public.automation_versions USING btree (org_id, automation_id, published_at);

CREATE UNIQUE INDEX automation_versions_org_id_key ON public.automation_versions USING btree (org_id, id);

CREATE UNIQUE INDEX automations_org_id_id_key ON public.automations USING btree (org_id, id);

CREATE UNIQUE INDEX automations_org_id_slug_key ON public.automations USING btree (org_id, slug);

CREATE INDEX budget_reservations_open_idx ON public.budget_reservations USING btree (created_at) WHERE (settled_at IS NULL);

CREATE INDEX connection_notices_open_idx ON public.connection_notices USING btree (org_id) WHERE (resolved_at IS NULL);

CREATE INDEX connection_notices_owed_idx ON public.connection_notices USING btree (created_at) WHERE (email_status = ANY (ARRAY['pending'::text, 'sending'::text]));

CREATE UNIQUE INDEX connections_org_id_key ON public.connections USING btree (org_id, id);

CREATE UNIQUE INDEX connections_org_id_name_key ON public.connections USING btree (org_id, name);

CREATE INDEX contact_sends_address_idx ON public.contact_sends USING btree (org_id, address, sent_at) WHERE (released_at IS NULL);

CREATE UNIQUE INDEX contact_sends_effect_key ON public.contact_sends USING btree (org_id, effect_key);

CREATE UNIQUE INDEX contacts_org_id_email_key ON public.contacts USING btree (org_id, email);

CREATE UNIQUE INDEX contacts_org_id_key ON public.contacts USING btree (org_id, id);

CREATE INDEX effects_run_idx ON public.effects USING btree (run_id);

CREATE INDEX email_messages_automation_idx ON public.email_messages USING btree (org_id, automation_id, node_id);

CREATE INDEX email_messages_message_idx ON public.email_messages USING btree (org_id, message_id);

CREATE INDEX email_messages_run_idx ON public.email_messages USING btree (run_id);

CREATE INDEX email_messages_step_idx ON public.email_messages USING btree (step_id);

CREATE UNIQUE INDEX email_templates_name_key ON public.email_templates USING btree (org_id, lower(name));

CREATE INDEX goal_events_contact_idx ON public.goal_events USING btree (org_id, automation_id, contact_id);

CREATE UNIQUE INDEX goal_events_webhook_key ON public.goal_events USING btree (org_id, automation_id, webhook_id) WHERE (webhook_id IS NOT NULL);

CREATE INDEX invitations_email_owed_idx ON public.invitations USING btree (created_at) WHERE ((email_status = ANY (ARRAY['pending'::text, 'sending'::text])) AND (accepted_at IS NULL) AND (declined_at IS NULL) AND (revoked_at IS NULL));

CREATE UNIQUE INDEX invitations_open_key ON public.invitations USING btree (org_id, email) WHERE ((accepted_at IS NULL) AND (declined_at IS NULL) AND (revoked_at IS NULL));

CREATE UNIQUE INDEX invitations_token_hash_key ON public.invitations USING btree (token_hash);

CREATE INDEX journey_counts_automation_idx ON public.journey_counts USING btree (org_id, automation_id);

CREATE UNIQUE INDEX memberships_org_id_slack_user_id_key ON public.memberships USING btree (org_id, slack_user_id);

CREATE UNIQUE INDEX organisations_slug_key ON public.organisations USING btree (slug);

CREATE INDEX outbox_unsent_due_idx ON public.outbox USING btree (available_at, id) WHERE (sent_at IS NULL);

CREATE INDEX outbox_unsent_run_idx ON public.outbox USING btree (run_id) WHERE (sent_at IS NULL);

CREATE INDEX run_migrations_org_automation_idx ON public.run_migrations USING btree (org_id, automation_id, created_at);

CREATE INDEX runs_automation_running_idx ON public.runs USING btree (org_id, automation_id, id) WHERE (status = 'running'::text);

CREATE INDEX runs_contact_idx ON public.runs USING btree (contact_id) WHERE (contact_id IS NOT NULL);

CREATE INDEX runs_held_idx ON public.runs USING btree (org_id, automation_id) WHERE (held_at IS NOT NULL);

CREATE INDEX runs_org_id_created_at_idx ON public.runs USING btree (org_id, created_at DESC);

CREATE UNIQUE INDEX runs_org_id_key ON public.runs USING btree (org_id, id);

CREATE UNIQUE INDEX runs_org_id_start_key_key ON public.runs USING btree (org_id, start_key);

CREATE INDEX runs_rerun_of_idx ON public.runs USING btree (org_id, rerun_of) WHERE (rerun_of IS NOT NULL);

CREATE INDEX runs_running_expires_idx ON public.runs USING btree (expires_at) WHERE (status = 'running'::text);

CREATE INDEX runs_running_idx ON public.runs USING btree (updated_at) WHERE (status = 'running'::text);

CREATE INDEX runs_running_version_idx ON public.runs USING btree (version_id) WHERE (status = 'running'::text);

CREATE INDEX runs_timeline_retention_idx ON public.runs USING btree (finished_at) WHERE ((status = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text, 'converted'::text])) AND ((timeline_removed_at IS NULL) OR (timeline_removed_at < finished_at)));

CREATE INDEX sessions_user_id_idx ON public.sessions USING btree (user_id);

CREATE UNIQUE INDEX signals_org_id_identity_key ON public.signals USING btree (org_id, identity);

CREATE INDEX signals_unconsumed_keys_idx ON public.signals USING gin (correlation_keys) WHERE (consumed_at IS NULL);

CREATE INDEX signin_throttle_expire_idx ON public.signin_throttle USING btree (expire);

CREATE INDEX slack_install_states_org_idx ON public.slack_install_states USING btree (org_id, expires_at);

CREATE INDEX steps_open_status_lease_until_idx ON public.steps USING btree (status, lease_until) WHERE (status = ANY (ARRAY['ready'::text, 'running'::text, 'waiting'::text, 'parked'::text]));

CREATE INDEX steps_parked_idx ON public.steps USING btree (org_id, ((error ->> 'connectionId'::text))) WHERE (status = 'parked'::text);

CREATE UNIQUE INDEX steps_run_id_node_id_iteration_key ON public.steps USING btree (run_id, node_id, iteration);

CREATE INDEX steps_sent_message_id_idx ON public.steps USING btree (org_id, ((output ->> 'messageId'::text))) WHERE ((kind = 'send_email'::text) AND ((output ->> 'messageId'::text) IS NOT NULL));

CREATE INDEX steps_settled_unadvanced_idx ON public.steps USING btree (run_id) WHERE ((advanced_at IS NULL) AND (status = ANY (ARRAY['done'::text, 'failed'::text])));

CREATE INDEX steps_waiting_correlation_idx ON public.steps USING btree (org_id, correlation_key) WHERE ((status = 'waiting'::text) AND (correlation_key IS NOT NULL));

CREATE INDEX timers_due_idx ON public.timers USING btree (org_id, due_at) WHERE (fired_at IS NULL);

CREATE INDEX timers_run_idx ON public.timers USING btree (run_id);

CREATE INDEX trigger_credentials_automation_idx ON public.trigger_credentials USING btree (org_id, automation_id);

CREATE UNIQUE INDEX trigger_credentials_current_key ON public.trigger_credentials USING btree (automation_id, kind) WHERE (expires_at IS NULL);

CREATE INDEX trigger_deliveries_automation_idx ON public.trigger_deliveries USING btree (org_id, automation_id, seq DESC);

CREATE INDEX trigger_deliveries_run_idx ON public.trigger_deliveries USING btree (org_id, run_id) WHERE (run_id IS NOT NULL);

CREATE UNIQUE INDEX users_email_key ON public.users USING btree (email);

CREATE TRIGGER automation_versions_immutable BEFORE DELETE OR UPDATE ON public.automation_versions FOR EACH ROW EXECUTE FUNCTION public.holdfast_refuse_published_version_change();

CREATE TRIGGER connections_break_notice AFTER UPDATE OF status ON public.connections FOR EACH ROW EXECUTE FUNCTION public.holdfast_connection_break_notice();

CREATE TRIGGER connections_break_number BEFORE UPDATE OF status ON public.connections FOR EACH ROW EXECUTE FUNCTION public.holdfast_connection_break_number();

CREATE TRIGGER effects_email_sent AFTER UPDATE OF status ON public.effects FOR EACH ROW WHEN (((new.status = 'settled'::text) AND (old.status IS DISTINCT FROM 'settled'::text) AND (new.kind = 'send_email'::text) AND (new.error IS NULL) AND (new.result ? 'messageId'::text) AND (new.result ? 'accepted'::text))) EXECUTE FUNCTION public.holdfast_email_sent();

CREATE TRIGGER organisations_default_budget AFTER INSERT ON public.organisations FOR EACH ROW EXECUTE FUNCTION public.holdfast_org_default_budget();

CREATE TRIGGER outbox_notify AFTER INSERT ON public.outbox REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION public.holdfast_notify_outbox();

CREATE TRIGGER runs_budgets BEFORE INSERT ON public.runs FOR EACH ROW EXECUTE FUNCTION public.holdfast_run_budgets();

CREATE TRIGGER runs_count_insert AFTER INSERT ON public.runs FOR EACH ROW EXECUTE FUNCTION public.holdfast_count_run();

CREATE TRIGGER runs_count_status AFTER UPDATE OF status ON public.runs FOR EACH ROW WHEN (((old.status IS DISTINCT FROM new.status) AND (current_setting('holdfast.count_run_end_by_statement'::text, true) IS DISTINCT FROM 'on'::text))) EXECUTE FUNCTION public.holdfast_count_run();

CREATE TRIGGER runs_count_version AFTER UPDATE OF version_id ON public.runs FOR EACH ROW WHEN ((old.version_id IS DISTINCT FROM new.version_id)) EXECUTE FUNCTION public.holdfast_count_run_version();

CREATE TRIGGER steps_count_insert AFTER INSERT ON public.steps FOR EACH ROW WHEN ((current_setting('holdfast.count_by_statement'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION public.holdfast_count_step();

CREATE TRIGGER steps_count_node AFTER UPDATE OF node_id ON public.steps FOR EACH ROW WHEN ((old.node_id IS DISTINCT FROM new.node_id)) EXECUTE FUNCTION public.holdfast_count_step_node();

CREATE TRIGGER steps_count_status AFTER UPDATE OF status ON public.steps FOR EACH ROW WHEN (((old.status IS DISTINCT FROM new.status) AND (NOT ((old.status = ANY (ARRAY['ready'::text, 'running'::text, 'waiting'::text])) AND (new.status = ANY (ARRAY['ready'::text, 'running'::text, 'waiting'::text])))) AND (current_setting('holdfast.count_by_statement'::text, true) IS DISTINCT FROM 'on'::text))) EXECUTE FUNCTION public.holdfast_count_step();

ALTER TABLE ONLY public.approval_edits
    ADD CONSTRAINT approval_edits_approval_fkey FOREIGN KEY (org_id, approval_id) REFERENCES public.approvals(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.approval_edits
    ADD CONSTRAINT approval_edits_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_run_fkey FOREIGN KEY (org_id, run_id) REFERENCES public.runs(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_step_fkey FOREIGN KEY (org_id, step_id) REFERENCES public.steps(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.automation_drafts
    ADD CONSTRAINT automation_drafts_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id);

ALTER TABLE ONLY public.automation_drafts
    ADD CONSTRAINT automation_drafts_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.automation_history
    ADD CONSTRAINT automation_history_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.automation_versions
    ADD CONSTRAINT automation_versions_org_id_automation_id_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id) ON UPDATE CASCADE ON DELETE RESTRICT;

ALTER TABLE ONLY public.automations
    ADD CONSTRAINT automations_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id) ON UPDATE CASCADE ON DELETE RESTRICT;

ALTER TABLE ONLY public.budget_reservations
    ADD CONSTRAINT budget_reservations_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.connection_notices
    ADD CONSTRAINT connection_notices_connection_fkey FOREIGN KEY (org_id, connection_id) REFERENCES public.connections(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.connection_slots
    ADD CONSTRAINT connection_slots_connection_id_fkey FOREIGN KEY (org_id, connection_id) REFERENCES public.connections(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.connection_slots
    ADD CONSTRAINT connection_slots_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.connections
    ADD CONSTRAINT connections_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.contact_sends
    ADD CONSTRAINT contact_sends_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.contacts
    ADD CONSTRAINT contacts_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.email_messages
    ADD CONSTRAINT email_messages_run_fkey FOREIGN KEY (org_id, run_id) REFERENCES public.runs(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.email_templates
    ADD CONSTRAINT email_templates_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.goal_events
    ADD CONSTRAINT goal_events_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.goal_events
    ADD CONSTRAINT goal_events_contact_fkey FOREIGN KEY (org_id, contact_id) REFERENCES public.contacts(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_accepted_by_fkey FOREIGN KEY (accepted_by) REFERENCES public.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_invited_by_fkey FOREIGN KEY (invited_by) REFERENCES public.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.org_budgets
    ADD CONSTRAINT org_budgets_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.run_migrations
    ADD CONSTRAINT run_migrations_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id);

ALTER TABLE ONLY public.run_migrations
    ADD CONSTRAINT run_migrations_from_fkey FOREIGN KEY (org_id, from_version_id) REFERENCES public.automation_versions(org_id, id);

ALTER TABLE ONLY public.run_migrations
    ADD CONSTRAINT run_migrations_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.run_migrations
    ADD CONSTRAINT run_migrations_to_fkey FOREIGN KEY (org_id, to_version_id) REFERENCES public.automation_versions(org_id, id);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_contact_fkey FOREIGN KEY (org_id, contact_id) REFERENCES public.contacts(org_id, id) ON DELETE SET NULL (contact_id);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_rerun_of_fkey FOREIGN KEY (org_id, rerun_of) REFERENCES public.runs(org_id, id) ON DELETE SET NULL (rerun_of);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_version_fkey FOREIGN KEY (org_id, version_id) REFERENCES public.automation_versions(org_id, id);

ALTER TABLE ONLY public.sending_rules
    ADD CONSTRAINT sending_rules_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.signals
    ADD CONSTRAINT signals_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.signals
    ADD CONSTRAINT signals_run_fkey FOREIGN KEY (org_id, run_id) REFERENCES public.runs(org_id, id) ON DELETE SET NULL (run_id);

ALTER TABLE ONLY public.signals
    ADD CONSTRAINT signals_step_fkey FOREIGN KEY (org_id, step_id) REFERENCES public.steps(org_id, id) ON DELETE SET NULL (step_id);

ALTER TABLE ONLY public.slack_install_states
    ADD CONSTRAINT slack_install_states_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.slack_install_states
    ADD CONSTRAINT slack_install_states_user_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.suppressions
    ADD CONSTRAINT suppressions_org_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.test_runs
    ADD CONSTRAINT test_runs_run_fkey FOREIGN KEY (org_id, run_id) REFERENCES public.runs(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.timers
    ADD CONSTRAINT timers_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organisations(id);

ALTER TABLE ONLY public.timers
    ADD CONSTRAINT timers_run_id_fkey FOREIGN KEY (org_id, run_id) REFERENCES public.runs(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.timers
    ADD CONSTRAINT timers_step_id_fkey FOREIGN KEY (org_id, step_id) REFERENCES public.steps(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.trigger_credentials
    ADD CONSTRAINT trigger_credentials_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.trigger_deliveries
    ADD CONSTRAINT trigger_deliveries_automation_fkey FOREIGN KEY (org_id, automation_id) REFERENCES public.automations(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.trigger_deliveries
    ADD CONSTRAINT trigger_deliveries_run_fkey FOREIGN KEY (org_id, run_id) REFERENCES public.runs(org_id, id) ON DELETE SET NULL (run_id);

ALTER TABLE public.approval_edits ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.approvals ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.automation_drafts ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.automation_history ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.automation_versions ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.automations ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.budget_reservations ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.connection_notices ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.connection_slots ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.connections ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.contact_sends ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.contacts ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.count_changes ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.count_tallies ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.effects ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.email_messages ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.email_templates ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.goal_events ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.invitations ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.journey_counts ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.memberships ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.org_budgets ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.outbox ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.run_events ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.run_migrations ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.run_split_paths ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.runs ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.sending_rules ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.signals ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.slack_install_states ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.steps ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.suppressions ENABLE ROW LEVEL SECURITY;

CREATE POLICY tenant_scope ON public.approval_edits TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.approvals TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.automation_drafts TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.automation_history TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.automation_versions TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.automations TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.budget_reservations TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.connection_notices TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.connection_slots TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.connections TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.contact_sends TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.contacts TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.count_changes TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.count_tallies TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.effects TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.email_messages TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.email_templates TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.goal_events TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.invitations TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.journey_counts TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.memberships TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.org_budgets TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.outbox TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.run_events TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.run_migrations TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.run_split_paths TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.runs TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.sending_rules TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.signals TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.slack_install_states TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.steps TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.suppressions TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.test_runs TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.timers TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.trigger_credentials TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

CREATE POLICY tenant_scope ON public.trigger_deliveries TO holdfast_web USING ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[])))) WITH CHECK ((( SELECT public.holdfast_scope_all() AS holdfast_scope_all) OR (org_id = ANY (( SELECT public.holdfast_scope_orgs() AS holdfast_scope_orgs)::text[]))));

ALTER TABLE public.test_runs ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.timers ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.trigger_credentials ENABLE ROW LEVEL SECURITY;

ALTER TABLE public.trigger_deliveries ENABLE ROW LEVEL SECURITY;

CREATE POLICY worker_all ON public.approval_edits TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.approvals TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.automation_drafts TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.automation_history TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.automation_versions TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.automations TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.budget_reservations TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.connection_notices TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.connection_slots TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.connections TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.contact_sends TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.contacts TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.count_changes TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.count_tallies TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.effects TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.email_messages TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.email_templates TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.goal_events TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.invitations TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.journey_counts TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.memberships TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.org_budgets TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.outbox TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.run_events TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.run_migrations TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.run_split_paths TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.runs TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.sending_rules TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.signals TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.slack_install_states TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.steps TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.suppressions TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.test_runs TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.timers TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.trigger_credentials TO holdfast_worker USING (true) WITH CHECK (true);

CREATE POLICY worker_all ON public.trigger_deliveries TO holdfast_worker USING (true) WITH CHECK (true);

GRANT USAGE ON SCHEMA public TO holdfast_web;
GRANT USAGE ON SCHEMA public TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_breaker_record(p_connection_id text, p_ok boolean, p_holder text, p_window_ms double precision, p_min_calls integer, p_rate double precision) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_breaker_record(p_connection_id text, p_ok boolean, p_holder text, p_window_ms double precision, p_min_calls integer, p_rate double precision) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_budget_reserve(p_org_id text, p_key text, p_owner text, p_micros bigint) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_budget_reserve(p_org_id text, p_key text, p_owner text, p_micros bigint) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_budget_settle(p_org_id text, p_key text, p_owner text, p_actual bigint) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_budget_settle(p_org_id text, p_key text, p_owner text, p_actual bigint) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_connection_break_notice() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_connection_break_notice() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_connection_break_number() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_connection_break_number() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_contact_resolve(p_org_id text, p_email text, p_time_zone text, p_attributes jsonb) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_contact_resolve(p_org_id text, p_email text, p_time_zone text, p_attributes jsonb) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_bucket(p_status text) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_bucket(p_status text) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_change(p_org_id text, p_version_id text, p_node_id text, p_from text, p_to text) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_run() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_run() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_run_version() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_run_version() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_step() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_step() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_step_node() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_step_node() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_tally_flush() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_tally_flush() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_count_tally_start() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_count_tally_start() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_effect_claim(p_org_id text, p_run_id text, p_step_id text, p_node_id text, p_iteration integer, p_kind text, p_attempt integer, p_lease_ms double precision) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_effect_claim(p_org_id text, p_run_id text, p_step_id text, p_node_id text, p_iteration integer, p_kind text, p_attempt integer, p_lease_ms double precision) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_email_outcome(p_org_id text, p_effect_key text, p_outcome text, p_detail jsonb) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_email_outcome(p_org_id text, p_effect_key text, p_outcome text, p_detail jsonb) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_email_sent() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_email_sent() TO holdfast_worker;

REVOKE ALL ON FUNCTION public.holdfast_invitation_org(p_token_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.holdfast_invitation_org(p_token_hash text) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_invitation_org(p_token_hash text) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_notify_outbox() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_notify_outbox() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_ordered_id(prefix text) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_ordered_id(prefix text) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_org_default_budget() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_org_default_budget() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_refuse_published_version_change() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_refuse_published_version_change() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_rows_insert(p_org_id text, p_run_id text, p_rows jsonb) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_rows_insert(p_org_id text, p_run_id text, p_rows jsonb) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_run_budgets() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_run_budgets() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_run_duplicate(p_org_id text, p_run_id text, p_event_data jsonb) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_run_duplicate(p_org_id text, p_run_id text, p_event_data jsonb) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_run_start(p_run_id text, p_org_id text, p_automation_id text, p_version_id text, p_start_key text, p_input jsonb, p_event_data jsonb, p_rows jsonb, p_contact_id text) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_run_start(p_run_id text, p_org_id text, p_automation_id text, p_version_id text, p_start_key text, p_input jsonb, p_event_data jsonb, p_rows jsonb, p_contact_id text) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_run_steps(p_run_id text) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_run_steps(p_run_id text) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_scope_all() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_scope_all() TO holdfast_worker;

REVOKE ALL ON FUNCTION public.holdfast_scope_orgs() FROM PUBLIC;
GRANT ALL ON FUNCTION public.holdfast_scope_orgs() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_scope_orgs() TO holdfast_worker;

REVOKE ALL ON FUNCTION public.holdfast_scope_session_orgs() FROM PUBLIC;
GRANT ALL ON FUNCTION public.holdfast_scope_session_orgs() TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_scope_session_orgs() TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_slot_acquire(p_org_id text, p_connection_id text, p_cap integer, p_holder text, p_lease_ms double precision) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_slot_acquire(p_org_id text, p_connection_id text, p_cap integer, p_holder text, p_lease_ms double precision) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_start_target(p_org_slug text, p_automation_slug text) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_start_target(p_org_slug text, p_automation_slug text) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_step_claim(p_step_id text, p_worker text, p_lease_ms double precision, p_outbox_id bigint, p_effect_kinds text[]) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_step_claim(p_step_id text, p_worker text, p_lease_ms double precision, p_outbox_id bigint, p_effect_kinds text[]) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_step_settle(p_step_id text, p_token integer, p_worker text, p_status text, p_output jsonb, p_error jsonb, p_delay_ms double precision, p_event text, p_event_data jsonb, p_run_seq bigint, p_rows jsonb, p_retry jsonb, p_effect jsonb) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_step_settle(p_step_id text, p_token integer, p_worker text, p_status text, p_output jsonb, p_error jsonb, p_delay_ms double precision, p_event text, p_event_data jsonb, p_run_seq bigint, p_rows jsonb, p_retry jsonb, p_effect jsonb) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_step_settle_batch(p_items jsonb, p_take jsonb, p_tally boolean) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_step_settle_batch(p_items jsonb, p_take jsonb, p_tally boolean) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_step_settle_many(p_items jsonb, p_take jsonb) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_step_settle_many(p_items jsonb, p_take jsonb) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_step_settle_set(p_items jsonb) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_step_settle_set(p_items jsonb) TO holdfast_worker;

GRANT ALL ON FUNCTION public.holdfast_steps_take_ready(p_lane text, p_limit integer, p_worker text, p_lease_ms double precision, p_effect_kinds text[], p_skip_busy_runs boolean) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_steps_take_ready(p_lane text, p_limit integer, p_worker text, p_lease_ms double precision, p_effect_kinds text[], p_skip_busy_runs boolean) TO holdfast_worker;

REVOKE ALL ON FUNCTION public.holdfast_tenant_table(t regclass) FROM PUBLIC;

GRANT ALL ON FUNCTION public.holdfast_timers_fire_walk(p_ids text[], p_wakes integer[], p_by text, p_plans jsonb, p_tally boolean) TO holdfast_web;
GRANT ALL ON FUNCTION public.holdfast_timers_fire_walk(p_ids text[], p_wakes integer[], p_by text, p_plans jsonb, p_tally boolean) TO holdfast_worker;

GRANT SELECT,INSERT,UPDATE ON TABLE public.approval_edits TO holdfast_web;
GRANT SELECT,INSERT,UPDATE ON TABLE public.approval_edits TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.approvals TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.approvals TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automation_drafts TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automation_drafts TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automation_history TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automation_history TO holdfast_worker;

GRANT ALL ON SEQUENCE public.automation_history_seq_seq TO holdfast_web;
GRANT ALL ON SEQUENCE public.automation_history_seq_seq TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automation_versions TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automation_versions TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automations TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.automations TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.budget_reservations TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.budget_reservations TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.connection_notices TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.connection_notices TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.connection_slots TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.connection_slots TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.connections TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.connections TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.contact_sends TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.contact_sends TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.contacts TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.contacts TO holdfast_worker;

GRANT SELECT,INSERT,DELETE ON TABLE public.count_changes TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.count_changes TO holdfast_worker;

GRANT SELECT ON TABLE public.count_tallies TO holdfast_web;
GRANT SELECT,INSERT,DELETE ON TABLE public.count_tallies TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.deployment_settings TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.deployment_settings TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.effects TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.effects TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.email_messages TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.email_messages TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.email_templates TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.email_templates TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.goal_events TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.goal_events TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.invitations TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.invitations TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.journey_counts TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.journey_counts TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.leader_leases TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.leader_leases TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.memberships TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.memberships TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.org_budgets TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.org_budgets TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.organisations TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.organisations TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.outbox TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.outbox TO holdfast_worker;

GRANT ALL ON SEQUENCE public.outbox_id_seq TO holdfast_web;
GRANT ALL ON SEQUENCE public.outbox_id_seq TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.run_events TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.run_events TO holdfast_worker;

GRANT ALL ON SEQUENCE public.run_events_id_seq TO holdfast_web;
GRANT ALL ON SEQUENCE public.run_events_id_seq TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.run_migrations TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.run_migrations TO holdfast_worker;

GRANT SELECT,INSERT,DELETE ON TABLE public.run_split_paths TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.run_split_paths TO holdfast_worker;

GRANT SELECT,INSERT,UPDATE ON TABLE public.runs TO holdfast_web;
GRANT SELECT,INSERT,UPDATE ON TABLE public.runs TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sending_rules TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sending_rules TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sessions TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sessions TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.signals TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.signals TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.signin_throttle TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.signin_throttle TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.slack_install_states TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.slack_install_states TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.steps TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.steps TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.suppressions TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.suppressions TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.test_runs TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.test_runs TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.timers TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.timers TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.trigger_credentials TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.trigger_credentials TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.trigger_deliveries TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.trigger_deliveries TO holdfast_worker;

GRANT ALL ON SEQUENCE public.trigger_deliveries_seq_seq TO holdfast_web;
GRANT ALL ON SEQUENCE public.trigger_deliveries_seq_seq TO holdfast_worker;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.users TO holdfast_web;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.users TO holdfast_worker;

ALTER DEFAULT PRIVILEGES FOR ROLE <migrator> IN SCHEMA public GRANT ALL ON SEQUENCES  TO holdfast_web;
ALTER DEFAULT PRIVILEGES FOR ROLE <migrator> IN SCHEMA public GRANT ALL ON SEQUENCES  TO holdfast_worker;

ALTER DEFAULT PRIVILEGES FOR ROLE <migrator> IN SCHEMA public GRANT ALL ON FUNCTIONS  TO holdfast_web;
ALTER DEFAULT PRIVILEGES FOR ROLE <migrator> IN SCHEMA public GRANT ALL ON FUNCTIONS  TO holdfast_worker;

ALTER DEFAULT PRIVILEGES FOR ROLE <migrator> IN SCHEMA public GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES  TO holdfast_web;
ALTER DEFAULT PRIVILEGES FOR ROLE <migrator> IN SCHEMA public GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES  TO holdfast_worker;
