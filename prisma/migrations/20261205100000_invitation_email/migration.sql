-- invitation email (issue 39): when the deployment has a system mailbox, an invitation is emailed to the invited address
--   by the sweeper and the owner never sees its link, so only the holder of the mailbox learns what the link shows
--   (whether the address has an account) or can make the account.
--   The row is the email's outbox: email_status 'pending' says an email is owed. No link exists until the sender
--   claims the row: the claim sets token_hash (of a token the sender made and holds in memory only) and 'sending' in
--   one statement, so nothing that yields the link is ever stored, clear or encrypted. 'sent' / 'failed' with
--   email_problem (a code the app puts in words), or 'pending' again to retry; a crash after the send and before its
--   record sends again with a new link (the first then says it was replaced). Inviting again (Send again) renews the
--   row: token_hash NULL and 'pending', so the earlier link stops working at once.
--   email_status NULL: the link was handed to the owner (no system mailbox), as before; such a row always has its hash.
--   link_base: the web's public address when the invitation was made, for the link when the sweeper has no
--   HOLDFAST_APP_URL.
ALTER TABLE "invitations"
  ALTER COLUMN "token_hash" DROP NOT NULL,
  ADD COLUMN "email_status" TEXT,
  ADD COLUMN "email_attempts" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "email_claimed_until" TIMESTAMPTZ(6),
  ADD COLUMN "email_sent_at" TIMESTAMPTZ(6),
  ADD COLUMN "email_problem" TEXT,
  ADD COLUMN "link_base" TEXT,
  ADD CONSTRAINT "invitations_email_status_check" CHECK ("email_status" IN ('pending', 'sending', 'sent', 'failed')),
  ADD CONSTRAINT "invitations_email_problem_check" CHECK (
    "email_problem" IN ('no_mailbox', 'egress_refused', 'unreachable', 'login_refused', 'address_refused', 'message_refused', 'unknown')),
  -- Only an emailed invitation waiting for its claim has no link yet; a link handed to the owner always has one.
  ADD CONSTRAINT "invitations_token_owed_check" CHECK ("token_hash" IS NOT NULL OR "email_status" = 'pending'),
  -- A sender holds a lease only while sending; the lease and the sent instant belong to the email's states.
  ADD CONSTRAINT "invitations_email_state_check" CHECK (
    ("email_claimed_until" IS NULL OR "email_status" = 'sending')
    AND ("email_sent_at" IS NULL OR "email_status" = 'sent')
    AND ("email_problem" IS NULL OR "email_status" IN ('pending', 'failed'))
    AND ("email_status" IS NOT NULL OR "email_attempts" = 0)),
  ADD CONSTRAINT "invitations_link_base_check" CHECK ("link_base" ~ '^https?://');

-- The sender's work: emails owed by open invitations, oldest first.
CREATE INDEX "invitations_email_owed_idx" ON "invitations" ("created_at")
  WHERE "email_status" IN ('pending', 'sending') AND "accepted_at" IS NULL AND "declined_at" IS NULL AND "revoked_at" IS NULL;
