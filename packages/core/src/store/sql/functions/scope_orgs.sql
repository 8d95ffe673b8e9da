-- The web connection's scope, judged by the database: the organisations named by holdfast.org_ids (a request
-- authenticated by a trigger credential, a signed Slack request or the inbound-email token), plus, when
-- holdfast.session names a signed-in browser's session, that user's (holdfast_scope_session_orgs).
-- Every tenant_scope policy calls it once per statement, so a start's one statement (its inserts, their triggers and
-- foreign-key reads) calls it about 16 times. An SQL function with one expression and neither SECURITY DEFINER nor
-- SET is inlined into the policy's InitPlan: no function call, no parse and plan of a query per statement (as a
-- SECURITY DEFINER SQL function it was parsed and planned on every call: half a start's database CPU). Without a
-- session it reads the settings only; the session's organisations need the definer's rights, and a function of
-- their own. Order and repeats do not matter: the policies test membership (= ANY).
-- History (prisma/migrations, never edited): 20261201050000_tenancy, 20261210130000_scope_inline.
CREATE OR REPLACE FUNCTION holdfast_scope_orgs() RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN COALESCE(current_setting('holdfast.session', true), '') = ''
              THEN COALESCE(string_to_array(NULLIF(current_setting('holdfast.org_ids', true), ''), ','), '{}')
              ELSE public.holdfast_scope_session_orgs() END
$$;
