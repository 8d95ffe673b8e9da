-- The web connection's "every organisation" switch (holdfast.all_orgs = 'on'), read by the tenant_scope policies.
-- History (prisma/migrations, never edited): 20261201050000_tenancy.
CREATE OR REPLACE FUNCTION holdfast_scope_all() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT COALESCE(current_setting('holdfast.all_orgs', true), 'off') = 'on' $$;
