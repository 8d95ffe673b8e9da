-- The tenant_scope policies' scope without a query per statement (issue 47, intake through the real route). Every
-- tenant_scope policy calls holdfast_scope_orgs() once per statement; as a SECURITY DEFINER SQL function it was parsed
-- and planned on every call, about 16 times a trigger start (each insert, its triggers, its foreign-key reads): half
-- the start's database CPU. holdfast_scope_orgs() becomes an SQL function PostgreSQL inlines (no SECURITY DEFINER, no
-- SET), which reads only the settings unless the connection names a session; the session's organisations move to
-- holdfast_scope_session_orgs(), SECURITY DEFINER and PL/pgSQL (planned once per connection). The same organisations
-- for every scope; the previous release's processes run the same policies, so they meet either body alike.
SET LOCAL lock_timeout = '10s';

CREATE OR REPLACE FUNCTION holdfast_scope_session_orgs() RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
-- Only the application's roles call it (PUBLIC gets EXECUTE on a new function); new here, so the previous release
-- never does.
-- contract: holdfast_scope_session_orgs
REVOKE ALL ON FUNCTION holdfast_scope_session_orgs() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION holdfast_scope_session_orgs() TO holdfast_web, holdfast_worker;

CREATE OR REPLACE FUNCTION holdfast_scope_orgs() RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN COALESCE(current_setting('holdfast.session', true), '') = ''
              THEN COALESCE(string_to_array(NULLIF(current_setting('holdfast.org_ids', true), ''), ','), '{}')
              ELSE public.holdfast_scope_session_orgs() END
$$;
