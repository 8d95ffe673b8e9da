-- What a start needs to know about its trigger URL (store/sql/automations.ts automationsFindStartTarget): the organisation
-- by slug, its automation by slug (automation_found false when the organisation has no such automation; no row when
-- there is no such organisation), the credentials a request may carry (current, and rotated ones inside their
-- overlap), the newest published version, the database clock, whether a sample is still wanted, and the gate its
-- lifecycle puts on deliveries. PL/pgSQL so its plan is made once per connection and kept (generic: every lookup is by
-- unique slugs): as a statement sent with each start it was planned every time, half a millisecond of the start's
-- database time. Runs as its caller, under the caller's row-level security.
-- fingerprint: a digest of every column but the clock. A starter that kept an earlier answer (run/start/target-cache.ts)
-- starts a run only in a statement that finds the same fingerprint (startTargetGuard), so a rotated or expired
-- credential, a pause, a new version or a renamed slug never meets an answer read before it.
-- History: new in 20261202 (was a statement in store/sql/automations.ts); fingerprint in 20261203110000.
CREATE OR REPLACE FUNCTION holdfast_start_target(p_org_slug text, p_automation_slug text)
RETURNS TABLE (org_id text, automation_id text, automation_found boolean, trigger_auth text, signing_secrets text[],
               url_tokens text[], version_id text, version integer, now_epoch double precision, needs_sample boolean,
               gate text, fingerprint text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
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
