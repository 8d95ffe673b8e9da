-- One outcome of a sent message (p_outcome: opened | clicked | replied | bounced | unsubscribed), race-free: the
-- message's row is locked, its count goes up by one, and the FIRST occurrence sets the outcome's instant, writes its
-- count_changes row ('email:<outcome>' at the send step's node) and its timeline row (email.<outcome>), all in the
-- caller's transaction. The run's first reply or click across all its messages also writes 'outcome:replied' /
-- 'outcome:clicked' at node '' (a transaction-scoped advisory lock per run makes "first" hold between two messages
-- of one run). p_detail: for a bounce {"status": "5.1.1", "detail": "..."}.
-- Returns 'first' | 'again' | 'unknown' (no such message for this organisation).
-- History (prisma/migrations, never edited): 20261207110000_email_outcomes.
CREATE OR REPLACE FUNCTION holdfast_email_outcome(p_org_id text, p_effect_key text, p_outcome text, p_detail jsonb)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
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
$function$;
