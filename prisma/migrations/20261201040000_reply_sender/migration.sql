-- Replies are believed only from the person the email went to (signals/email.ts). Anyone who learns a sent
-- Message-ID can send a message with that In-Reply-To; only the recipient's own reply may move the run.
--
-- sender: an email reply's From, parsed to one lower-cased bare address (NULL: none could be read). A waiting step
--   consumes an email reply only when this equals the recipient of the message the step waits on
--   (sql/signals.ts signalsConsumeWaiting), so the rule holds however late the run reaches its wait.
-- unmatched_reason: why the signal will never be consumed (e.g. a sender who is not the recipient); such a signal
--   keeps run_id pointing at the run whose message it claims to answer, so the run page lists it, and never gets
--   a step_id.
ALTER TABLE "signals" ADD COLUMN "sender" TEXT;
ALTER TABLE "signals" ADD COLUMN "unmatched_reason" TEXT;
ALTER TABLE "signals" ADD CONSTRAINT "signals_unmatched_check" CHECK (unmatched_reason IS NULL OR consumed_at IS NULL);

-- Replies stored before this migration: the address in <...>, or the whole From when it is a bare address.
UPDATE "signals"
SET "sender" = lower(btrim(COALESCE(substring(payload->>'from' FROM '<\s*([^<>\s]+@[^<>\s]+)\s*>'), payload->>'from')))
WHERE kind = 'email_reply';

-- The email a reply answers, found by its Message-ID (a send_email step's output) when the reply comes in.
CREATE INDEX "steps_sent_message_id_idx" ON "steps" ("org_id", (output->>'messageId')) WHERE kind = 'send_email' AND (output->>'messageId') IS NOT NULL;
