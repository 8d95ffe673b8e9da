-- Replies that route themselves and Slack that installs itself (issue 16, items 5 and 6).
--
-- Reply routing needs no table: a sent email's Reply-To is reply+<token>@INBOUND_EMAIL_DOMAIN, the token the
-- send_email step's id and a MAC over (organisation, run, step) keyed with the deployment's secret
-- (packages/core/src/signals/routing.ts); the step row is what a reply is matched to.
--
-- slack_install_states: one row per "Add to Slack" started, so the OAuth `state` Slack hands back is used once.
--   The state itself is signed (HMAC over organisation, session, nonce and expiry: slack/install.ts); the row is keyed
--   by the nonce's sha256 (the nonce is never stored), bound to the session that started it, and expires after 10
--   minutes by this database's clock. used_at is set by the callback that consumes it; a replay finds it set.
CREATE TABLE "slack_install_states" (
  "id" TEXT NOT NULL,
  "org_id" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "session_id" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "expires_at" TIMESTAMPTZ(6) NOT NULL,
  "used_at" TIMESTAMPTZ(6),
  CONSTRAINT "slack_install_states_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "slack_install_states_expiry_check" CHECK ("expires_at" > "created_at" AND "expires_at" <= "created_at" + interval '1 hour'),
  CONSTRAINT "slack_install_states_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations" ("id") ON DELETE CASCADE,
  CONSTRAINT "slack_install_states_user_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE
);
-- Starting an install deletes the organisation's states that ended more than a day ago (sql/slack-install-states.ts).
CREATE INDEX "slack_install_states_org_idx" ON "slack_install_states" ("org_id", "expires_at");

SELECT holdfast_tenant_table('slack_install_states');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "slack_install_states" TO holdfast_web, holdfast_worker;
