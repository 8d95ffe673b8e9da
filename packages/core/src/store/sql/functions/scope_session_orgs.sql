-- holdfast_scope_orgs() for a connection that names a session: the organisations named by holdfast.org_ids plus
-- those of the signed-in user whose session id (sha256 of the cookie token) is holdfast.session, only while that
-- session is valid by this database's clock. SECURITY DEFINER: it reads sessions and memberships whatever the caller
-- may see. PL/pgSQL so its query is planned once per connection, not on every call.
-- History (prisma/migrations, never edited): 20261210130000_scope_inline (was holdfast_scope_orgs' body).
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
