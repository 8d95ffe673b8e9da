-- Row-level security, enabled and forced, on a table that carries org_id. Every such table gets it here, and a
-- later migration that adds one calls this (a test fails when a table with org_id has no forced RLS).
-- History (prisma/migrations, never edited): 20261201050000_tenancy.
CREATE OR REPLACE FUNCTION holdfast_tenant_table(t regclass) RETURNS void LANGUAGE plpgsql AS $$
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
