-- Trigger on effects (AFTER UPDATE OF status): a send_email effect settled with the server's answer (a real send:
-- its result has "accepted"; a test run's simulated message has none, a skipped send made no effect) becomes its
-- row in email_messages, in the transaction of the step's settle, with its 'email:sent' count (and 'email:delivered'
-- when the server took it for at least one recipient). Once per effect key: a repeated settle adds nothing.
-- History (prisma/migrations, never edited): 20261207110000_email_outcomes.
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
