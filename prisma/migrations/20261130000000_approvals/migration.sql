-- People and approvals (issue 7). Users sign in with a password (scrypt) and hold a role in each organisation;
-- an approval is one request for a decision on exact content (bound by its digest), decided once.

CREATE TABLE "users" (
    "id" TEXT NOT NULL DEFAULT ('usr_' || replace(gen_random_uuid()::text, '-', '')),
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "password_hash" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "users_email_lower_check" CHECK (email = lower(email))
);
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- A user's role in one organisation. Removing the row (or lowering the role) takes access away at once: every
-- decision re-reads it when the button is pressed. slack_user_id ties a Slack user of the org's workspace to it.
CREATE TABLE "memberships" (
    "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
    "user_id" TEXT NOT NULL REFERENCES "users"("id"),
    "role" TEXT NOT NULL,
    "slack_user_id" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "memberships_pkey" PRIMARY KEY ("org_id", "user_id"),
    CONSTRAINT "memberships_role_check" CHECK (role IN ('owner', 'editor', 'approver', 'viewer'))
);
CREATE UNIQUE INDEX "memberships_org_id_slack_user_id_key" ON "memberships"("org_id", "slack_user_id");

-- Sessions: the cookie holds a random token; only its sha256 is stored (a database read gives no session away).
CREATE TABLE "sessions" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL REFERENCES "users"("id"),
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sessions_user_id_idx" ON "sessions"("user_id");

-- One request for a decision, made when a run reaches an approval step (one per step: an escalation is a new step
-- and a new row). Decided once: the first decision that passes every check moves status off 'pending'.
CREATE TABLE "approvals" (
    "id" TEXT NOT NULL DEFAULT ('apr_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
    "run_id" TEXT NOT NULL,
    "step_id" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "stage" INTEGER NOT NULL DEFAULT 1,
    "approvers" JSONB NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "deadline_at" TIMESTAMPTZ(6) NOT NULL,
    "on_deadline" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "decided_by" TEXT,
    "decided_by_name" TEXT,
    "decided_via" TEXT,
    "decided_at" TIMESTAMPTZ(6),
    -- Slack: where the request goes, where it was posted, and whether a post or an update is still owed.
    "slack" JSONB,
    "slack_message" JSONB,
    "notify_state" TEXT NOT NULL DEFAULT 'none',
    "notify_error" TEXT,
    "notify_attempted_at" TIMESTAMPTZ(6),
    -- Bumped by every change the Slack message must show: the notifier marks it done only for the revision it showed.
    "revision" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "approvals_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "approvals_status_check" CHECK (status IN ('pending', 'approved', 'rejected', 'escalated', 'expired', 'cancelled')),
    CONSTRAINT "approvals_decided_check" CHECK ((status = 'pending') = (decided_at IS NULL)),
    CONSTRAINT "approvals_via_check" CHECK (decided_via IS NULL OR decided_via IN ('slack', 'inbox', 'deadline', 'run')),
    CONSTRAINT "approvals_notify_check" CHECK (notify_state IN ('none', 'post', 'update', 'done', 'failed'))
);
CREATE UNIQUE INDEX "approvals_step_id_key" ON "approvals"("step_id");
CREATE INDEX "approvals_org_status_idx" ON "approvals"("org_id", "status", "deadline_at");
CREATE INDEX "approvals_notify_idx" ON "approvals"("notify_attempted_at") WHERE notify_state IN ('post', 'update');

-- A decision is a signal too: it settles the waiting approval step through the same consume as a reply.
ALTER TABLE "signals" DROP CONSTRAINT "signals_kind_check";
ALTER TABLE "signals" ADD CONSTRAINT "signals_kind_check" CHECK (kind IN ('email_reply', 'approval'));
