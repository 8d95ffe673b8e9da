-- Tenancy enforced by PostgreSQL as well as by queries.
--
-- Roles (cluster-wide; created here, passwords set by `holdfast migrate` from the URLs that name them):
--   holdfast_web     the web process: neither superuser, nor owner, nor BYPASSRLS. Sees only the rows of the
--                    organisations in its connection's scope (holdfast_scope_orgs() below).
--   holdfast_worker  background processes and the CLI: every organisation's rows (they serve all of them), through
--                    an explicit policy rather than BYPASSRLS (which only a superuser may grant).
-- Migrations run as the migration URL's role (the owner of these objects; superuser or BYPASSRLS).
DO $$
BEGIN
  CREATE ROLE holdfast_web LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS NOREPLICATION;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
  CREATE ROLE holdfast_worker LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS NOREPLICATION;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

DO $$
BEGIN
  EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO holdfast_web, holdfast_worker', current_database());
END $$;
GRANT USAGE ON SCHEMA public TO holdfast_web, holdfast_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO holdfast_web, holdfast_worker;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO holdfast_web, holdfast_worker;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO holdfast_web, holdfast_worker;
-- Tables, sequences and functions later migrations create get the same grants.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO holdfast_web, holdfast_worker;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO holdfast_web, holdfast_worker;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO holdfast_web, holdfast_worker;
-- The migration record is the migrator's alone.
REVOKE ALL ON TABLE _holdfast_migrations FROM holdfast_web, holdfast_worker;

-- The web connection's scope, judged by the database: the organisations named by holdfast.org_ids (a request
-- authenticated by a trigger credential, a signed Slack request or the inbound-email token), plus those of the
-- signed-in user whose session id (sha256 of the cookie token) is holdfast.session, only while that session is valid
-- by this database's clock. SECURITY DEFINER: it reads sessions and memberships whatever the caller may see.
CREATE FUNCTION holdfast_scope_orgs() RETURNS text[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT COALESCE(array_agg(DISTINCT o.id), '{}') FROM (
    SELECT unnest(string_to_array(NULLIF(current_setting('holdfast.org_ids', true), ''), ',')) AS id
    UNION ALL
    SELECT m.org_id FROM sessions s JOIN memberships m ON m.user_id = s.user_id
    WHERE s.id = NULLIF(current_setting('holdfast.session', true), '')
      AND s.expires_at > now() AND s.idle_expires_at > now()
  ) o
$$;
CREATE FUNCTION holdfast_scope_all() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT COALESCE(current_setting('holdfast.all_orgs', true), 'off') = 'on' $$;
REVOKE ALL ON FUNCTION holdfast_scope_orgs() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION holdfast_scope_orgs(), holdfast_scope_all() TO holdfast_web, holdfast_worker;

-- Row-level security, enabled and forced, on a table that carries org_id. Every such table gets it here, and a
-- later migration that adds one calls this (a test fails when a table with org_id has no forced RLS).
CREATE FUNCTION holdfast_tenant_table(t regclass) RETURNS void LANGUAGE plpgsql AS $$
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
REVOKE ALL ON FUNCTION holdfast_tenant_table(regclass) FROM PUBLIC, holdfast_web, holdfast_worker;

DO $$
DECLARE t regclass;
BEGIN
  FOR t IN
    SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)
  LOOP
    PERFORM holdfast_tenant_table(t);
  END LOOP;
END $$;

-- Foreign keys between organisation tables include org_id: a row can never point into another organisation.
CREATE UNIQUE INDEX "automation_versions_org_id_key" ON "automation_versions" ("org_id", "id");
CREATE UNIQUE INDEX "runs_org_id_key" ON "runs" ("org_id", "id");
CREATE UNIQUE INDEX "steps_org_id_key" ON "steps" ("org_id", "id");
CREATE UNIQUE INDEX "contacts_org_id_key" ON "contacts" ("org_id", "id");
CREATE UNIQUE INDEX "connections_org_id_key" ON "connections" ("org_id", "id");

ALTER TABLE "runs" DROP CONSTRAINT "runs_version_fkey",
  ADD CONSTRAINT "runs_version_fkey" FOREIGN KEY ("org_id", "version_id") REFERENCES "automation_versions" ("org_id", "id"),
  ADD CONSTRAINT "runs_automation_fkey" FOREIGN KEY ("org_id", "automation_id") REFERENCES "automations" ("org_id", "id");
ALTER TABLE "runs" DROP CONSTRAINT "runs_contact_fkey",
  ADD CONSTRAINT "runs_contact_fkey" FOREIGN KEY ("org_id", "contact_id") REFERENCES "contacts" ("org_id", "id") ON DELETE SET NULL ("contact_id");
ALTER TABLE "steps" DROP CONSTRAINT "steps_run_fkey",
  ADD CONSTRAINT "steps_run_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE CASCADE;
ALTER TABLE "run_events" DROP CONSTRAINT "run_events_run_fkey",
  ADD CONSTRAINT "run_events_run_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE CASCADE;
ALTER TABLE "timers" DROP CONSTRAINT "timers_run_id_fkey",
  ADD CONSTRAINT "timers_run_id_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE CASCADE;
ALTER TABLE "timers" DROP CONSTRAINT "timers_step_id_fkey",
  ADD CONSTRAINT "timers_step_id_fkey" FOREIGN KEY ("org_id", "step_id") REFERENCES "steps" ("org_id", "id") ON DELETE CASCADE;
ALTER TABLE "effects" DROP CONSTRAINT "effects_run_id_fkey",
  ADD CONSTRAINT "effects_run_id_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE CASCADE;
ALTER TABLE "connection_slots" DROP CONSTRAINT "connection_slots_connection_id_fkey",
  ADD CONSTRAINT "connection_slots_connection_id_fkey" FOREIGN KEY ("org_id", "connection_id") REFERENCES "connections" ("org_id", "id") ON DELETE CASCADE;
-- Columns that named a row of another table without a foreign key get one, with org_id. Left without: outbox.run_id
-- and run_events.step_id (one row per state change on the hot path; both are written in the same transaction as the
-- row they name, by code that takes the org from that row).
ALTER TABLE "approvals"
  ADD CONSTRAINT "approvals_run_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE CASCADE,
  ADD CONSTRAINT "approvals_step_fkey" FOREIGN KEY ("org_id", "step_id") REFERENCES "steps" ("org_id", "id") ON DELETE CASCADE;
ALTER TABLE "effects"
  ADD CONSTRAINT "effects_step_fkey" FOREIGN KEY ("org_id", "step_id") REFERENCES "steps" ("org_id", "id") ON DELETE CASCADE;
ALTER TABLE "signals"
  ADD CONSTRAINT "signals_run_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE SET NULL ("run_id"),
  ADD CONSTRAINT "signals_step_fkey" FOREIGN KEY ("org_id", "step_id") REFERENCES "steps" ("org_id", "id") ON DELETE SET NULL ("step_id");
ALTER TABLE "run_migrations"
  ADD CONSTRAINT "run_migrations_automation_fkey" FOREIGN KEY ("org_id", "automation_id") REFERENCES "automations" ("org_id", "id"),
  ADD CONSTRAINT "run_migrations_from_fkey" FOREIGN KEY ("org_id", "from_version_id") REFERENCES "automation_versions" ("org_id", "id"),
  ADD CONSTRAINT "run_migrations_to_fkey" FOREIGN KEY ("org_id", "to_version_id") REFERENCES "automation_versions" ("org_id", "id");
