-- email outcomes (issue 43): one row per email a real run sent, and what became of it.
--   email_messages: written by a trigger on effects when a send_email effect settles with the server's answer, in the
--   transaction of the step's settle (test runs and skipped sends write none). Each outcome keeps the instant of
--   its first occurrence and a count: delivered (the SMTP server took it), bounced (a DSN that came back to the
--   signed envelope sender, the send's VERP address at INBOUND_EMAIL_DOMAIN), opened (the tracking pixel, when the
--   automation has it on), clicked (a link through the web's signed redirect), replied (an inbound reply matched to
--   it), unsubscribed (its unsubscribe link). The first occurrence of each also writes its count_changes row
--   ('email:<outcome>' at the send step's node) and the run's first reply or click 'outcome:replied' /
--   'outcome:clicked' at node '' (holdfast_email_outcome).
--   automations.track_opens: the per-automation open tracking (off by default).
-- Live bodies: packages/core/src/store/sql/functions/email_sent.sql and email_outcome.sql.
CREATE TABLE "email_messages" (
  "org_id" TEXT NOT NULL,
  "effect_key" TEXT NOT NULL,
  "automation_id" TEXT NOT NULL,
  "version_id" TEXT NOT NULL,
  "run_id" TEXT NOT NULL,
  "step_id" TEXT NOT NULL,
  "node_id" TEXT NOT NULL,
  "message_id" TEXT NOT NULL,
  "recipient" TEXT NOT NULL,
  "sent_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "delivered_at" TIMESTAMPTZ(6),
  "bounced_at" TIMESTAMPTZ(6),
  "bounce_count" INTEGER NOT NULL DEFAULT 0,
  "bounce_status" TEXT,
  "bounce_detail" TEXT,
  "opened_at" TIMESTAMPTZ(6),
  "open_count" INTEGER NOT NULL DEFAULT 0,
  "clicked_at" TIMESTAMPTZ(6),
  "click_count" INTEGER NOT NULL DEFAULT 0,
  "replied_at" TIMESTAMPTZ(6),
  "reply_count" INTEGER NOT NULL DEFAULT 0,
  "unsubscribed_at" TIMESTAMPTZ(6),
  CONSTRAINT "email_messages_pkey" PRIMARY KEY ("org_id", "effect_key"),
  CONSTRAINT "email_messages_counts_check" CHECK (("opened_at" IS NULL) = ("open_count" = 0) AND ("clicked_at" IS NULL) = ("click_count" = 0)
    AND ("replied_at" IS NULL) = ("reply_count" = 0) AND ("bounced_at" IS NULL) = ("bounce_count" = 0)),
  CONSTRAINT "email_messages_run_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE CASCADE
);
CREATE INDEX "email_messages_message_idx" ON "email_messages" ("org_id", "message_id");
CREATE INDEX "email_messages_step_idx" ON "email_messages" ("step_id");
CREATE INDEX "email_messages_run_idx" ON "email_messages" ("run_id");
CREATE INDEX "email_messages_automation_idx" ON "email_messages" ("org_id", "automation_id", "node_id");
SELECT holdfast_tenant_table('email_messages');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "email_messages" TO holdfast_web, holdfast_worker;

ALTER TABLE "automations" ADD COLUMN "track_opens" BOOLEAN NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION holdfast_email_sent() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER "effects_email_sent" AFTER UPDATE OF "status" ON "effects" FOR EACH ROW
  WHEN (NEW.status = 'settled' AND OLD.status IS DISTINCT FROM 'settled' AND NEW.kind = 'send_email' AND NEW.error IS NULL
        AND NEW.result ? 'messageId' AND NEW.result ? 'accepted')
  EXECUTE FUNCTION holdfast_email_sent();
