-- Contacts with consent, the suppression list, per-organisation connections with encrypted secrets (issue 5),
-- and parked steps: an authorisation failure parks its step until the connection is reconnected.
-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "contact_id" TEXT;

-- CreateTable
CREATE TABLE "contacts" (
    "id" TEXT NOT NULL DEFAULT ('ctc_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "time_zone" TEXT,
    "consent" TEXT NOT NULL DEFAULT 'unknown',
    "consent_changed_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "suppressions" (
    "org_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "suppressions_pkey" PRIMARY KEY ("org_id","email")
);

-- CreateTable
CREATE TABLE "connections" (
    "id" TEXT NOT NULL DEFAULT ('cnx_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "config" JSONB NOT NULL DEFAULT '{}',
    "secret" TEXT,
    "status" TEXT NOT NULL DEFAULT 'ok',
    "status_reason" TEXT,
    "checked_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connections_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "contacts_org_id_email_key" ON "contacts"("org_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "connections_org_id_name_key" ON "connections"("org_id", "name");


-- Hand-written: tenancy, checks, and the parked step status.
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id");
ALTER TABLE "suppressions" ADD CONSTRAINT "suppressions_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id");
ALTER TABLE "connections" ADD CONSTRAINT "connections_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id");
ALTER TABLE "runs" ADD CONSTRAINT "runs_contact_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE SET NULL;
CREATE INDEX "runs_contact_idx" ON "runs" ("contact_id") WHERE contact_id IS NOT NULL;
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_email_lower_check" CHECK (email = lower(email));
ALTER TABLE "suppressions" ADD CONSTRAINT "suppressions_email_lower_check" CHECK (email = lower(email));
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_consent_check" CHECK (consent IN ('granted', 'unknown', 'withdrawn'));
ALTER TABLE "connections" ADD CONSTRAINT "connections_kind_check" CHECK (kind IN ('smtp', 'crm', 'model', 'slack'));
ALTER TABLE "connections" ADD CONSTRAINT "connections_status_check" CHECK (status IN ('ok', 'needs_reconnect'));

-- A parked step waits for a person (e.g. "reconnect the mailbox"): not claimable, not failed, still open for the
-- walk and for cancel. error->>'connectionId' names the connection whose reconnect resumes it.
ALTER TABLE "steps" DROP CONSTRAINT "steps_status_check";
ALTER TABLE "steps" ADD CONSTRAINT "steps_status_check"
  CHECK (status IN ('ready', 'running', 'waiting', 'parked', 'done', 'failed', 'cancelled'));
CREATE INDEX "steps_parked_idx" ON "steps" (org_id, (error->>'connectionId')) WHERE status = 'parked';

-- The contact a run is about, resolved from the trigger payload's email when the run starts: one row per
-- (org, lower-cased email); a time zone fills in once and is never overwritten by a later start.
CREATE FUNCTION holdfast_contact_resolve(p_org_id text, p_email text, p_time_zone text) RETURNS text AS $$
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
    WHERE id = contact_id AND time_zone IS NULL AND p_time_zone IS NOT NULL;
  END IF;
  RETURN contact_id;
END;
$$ LANGUAGE plpgsql;

-- Starts one logical run per (org, start_key) in one statement: the run row, its run.started event and its first
-- walk (the plan the starter's walk computed from the graph and the input alone: inline nodes' events, the first
-- steps with their step.ready outbox rows, or how the run ended). A repeat finds the run and records only a
-- run.duplicate_start. A first walk that needs the engine (a timer) takes the transactional path in TypeScript.
-- p_contact_id: holdfast_contact_resolve(...) in the same statement. Returns {"runId": text, "inserted": bool}.
CREATE FUNCTION holdfast_run_start(
  p_org_id text, p_automation_id text, p_version_id text, p_start_key text, p_input jsonb,
  p_event_data jsonb, p_plan jsonb, p_worker text, p_contact_id text
) RETURNS jsonb AS $$
DECLARE
  run_id text;
  n record;
  new_id text;
BEGIN
  INSERT INTO runs (org_id, automation_id, version_id, start_key, input, seq, contact_id)
  VALUES (p_org_id, p_automation_id, p_version_id, p_start_key, p_input, 1, p_contact_id)
  ON CONFLICT (org_id, start_key) DO NOTHING
  RETURNING id INTO run_id;
  IF run_id IS NULL THEN
    -- ON CONFLICT waited for the other start to commit; in PL/pgSQL each statement takes a fresh snapshot
    -- (READ COMMITTED), so this SELECT sees the committed row.
    SELECT id INTO run_id FROM runs WHERE org_id = p_org_id AND start_key = p_start_key;
    IF run_id IS NULL THEN
      RAISE EXCEPTION 'start key % conflicted but no run holds it', p_start_key;
    END IF;
    INSERT INTO run_events (org_id, run_id, type, data) VALUES (p_org_id, run_id, 'run.duplicate_start', p_event_data);
    RETURN jsonb_build_object('runId', run_id, 'inserted', false);
  END IF;
  INSERT INTO run_events (org_id, run_id, type, data) VALUES (p_org_id, run_id, 'run.started', p_event_data);
  INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
  SELECT p_org_id, run_id, e."nodeId", e.type, p_worker, e.data
  FROM jsonb_to_recordset(COALESCE(p_plan->'events', '[]'::jsonb)) AS e(type text, "nodeId" text, data jsonb);
  FOR n IN SELECT * FROM jsonb_to_recordset(COALESCE(p_plan->'steps', '[]'::jsonb))
             AS x("nodeId" text, kind text, lane text, iteration int, "maxAttempts" int)
  LOOP
    INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts)
    VALUES (p_org_id, run_id, n."nodeId", n.iteration, n.kind, n.lane, n."maxAttempts")
    RETURNING id INTO new_id;
    INSERT INTO outbox (org_id, run_id, topic, payload)
    VALUES (p_org_id, run_id, 'step.ready', jsonb_build_object('orgId', p_org_id, 'runId', run_id, 'stepId', new_id, 'lane', n.lane));
    INSERT INTO run_events (org_id, run_id, step_id, node_id, type, lane, worker, data)
    VALUES (p_org_id, run_id, new_id, n."nodeId", 'step.scheduled', n.lane, p_worker, jsonb_build_object('iteration', n.iteration));
  END LOOP;
  IF p_plan->'finish' IS NOT NULL AND jsonb_typeof(p_plan->'finish') <> 'null' THEN
    UPDATE runs SET status = p_plan->'finish'->>'status', error = p_plan->'finish'->'error', finished_at = now(),
                    seq = seq + 1, updated_at = now()
    WHERE id = run_id;
    INSERT INTO run_events (org_id, run_id, node_id, type, worker, data)
    SELECT p_org_id, run_id, e."nodeId", e.type, p_worker, e.data
    FROM jsonb_to_record(p_plan->'finish'->'event') AS e(type text, "nodeId" text, data jsonb);
  END IF;
  RETURN jsonb_build_object('runId', run_id, 'inserted', true);
END;
$$ LANGUAGE plpgsql;

-- When the provider call of an effect that cannot be repeated safely began (written just before the call). A lapsed
-- first claim that never began is simply forgotten (the call never happened), not made uncertain.
ALTER TABLE "effects" ADD COLUMN "started_at" TIMESTAMPTZ(6);
