-- goals (issue 43): an automation may name a goal (the contact replied, clicked, or a goal event arrived on the
-- automation's goal URL); when it is met, the contact's runs of that automation end at their next safe point as
-- 'converted'.
--   automations.goal: the automation's goal (null: none). It lives on the automation, not on a version: it says what
--   the journey is for, so changing it applies at once to the runs in flight and needs no new version, and every
--   version's conversion rate is measured against the same goal.
--   runs.goal_met: the goal that is ending the run. Set with cancel_requested_at (the cancellation's safe point: the
--   lane workers claim nothing more, an effect in flight settles first), and the walk ends the run as 'converted'
--   instead of 'cancelled'.
--   goal_events: one row per goal met for a contact of an automation (the contact is converted for it): a goal URL's
--   delivery (unique by its webhook-id, so a repeated delivery changes nothing), a reply, a click.
--   trigger_credentials: the goal URL's own signing secret and URL token (kinds goal_*), apart from the start
--   trigger's, so a CRM that reports conversions cannot start runs.
ALTER TABLE "runs" DROP CONSTRAINT "runs_status_check";
ALTER TABLE "runs" ADD CONSTRAINT "runs_status_check" CHECK ("status" IN ('running', 'completed', 'failed', 'cancelled', 'converted'));
ALTER TABLE "runs" ADD COLUMN "goal_met" TEXT;
ALTER TABLE "runs" ADD CONSTRAINT "runs_goal_met_check" CHECK (
  ("goal_met" IS NULL OR ("goal_met" IN ('replied', 'clicked', 'event') AND "cancel_requested_at" IS NOT NULL))
  AND (("status" = 'converted') <= ("goal_met" IS NOT NULL))
);

-- Finished runs' timelines are removed after the retention period: converted runs are finished too.
DROP INDEX "runs_timeline_retention_idx";
CREATE INDEX "runs_timeline_retention_idx" ON "runs" ("finished_at")
  WHERE "status" IN ('completed', 'failed', 'cancelled', 'converted') AND ("timeline_removed_at" IS NULL OR "timeline_removed_at" < "finished_at");

ALTER TABLE "automations" ADD COLUMN "goal" TEXT;
ALTER TABLE "automations" ADD CONSTRAINT "automations_goal_check" CHECK ("goal" IS NULL OR "goal" IN ('replied', 'clicked', 'event'));

ALTER TABLE "trigger_credentials" DROP CONSTRAINT "trigger_credentials_kind_check";
ALTER TABLE "trigger_credentials" ADD CONSTRAINT "trigger_credentials_kind_check"
  CHECK ("kind" IN ('signing_secret', 'url_token', 'goal_signing_secret', 'goal_url_token'));

CREATE TABLE "goal_events" (
  "id" TEXT NOT NULL DEFAULT holdfast_ordered_id('gev_'),
  "org_id" TEXT NOT NULL,
  "automation_id" TEXT NOT NULL,
  "contact_id" TEXT NOT NULL,
  "goal" TEXT NOT NULL,
  "webhook_id" TEXT,
  "runs_ended" INTEGER NOT NULL DEFAULT 0,
  "met_at" TIMESTAMPTZ(6) NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "goal_events_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "goal_events_goal_check" CHECK ("goal" IN ('replied', 'clicked', 'event')),
  CONSTRAINT "goal_events_runs_ended_check" CHECK ("runs_ended" >= 0),
  CONSTRAINT "goal_events_automation_fkey" FOREIGN KEY ("org_id", "automation_id") REFERENCES "automations" ("org_id", "id") ON DELETE CASCADE,
  -- Erasing a contact erases its conversions with it.
  CONSTRAINT "goal_events_contact_fkey" FOREIGN KEY ("org_id", "contact_id") REFERENCES "contacts" ("org_id", "id") ON DELETE CASCADE
);
CREATE UNIQUE INDEX "goal_events_webhook_key" ON "goal_events" ("org_id", "automation_id", "webhook_id") WHERE "webhook_id" IS NOT NULL;
CREATE INDEX "goal_events_contact_idx" ON "goal_events" ("org_id", "automation_id", "contact_id");
SELECT holdfast_tenant_table('goal_events');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "goal_events" TO holdfast_web, holdfast_worker;
