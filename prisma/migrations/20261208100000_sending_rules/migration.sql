-- sending rules (issue 44): quiet hours and a frequency cap per organisation, each automation's overrides, and the
-- sends the cap counts.
--   sending_rules: one row per organisation that set a rule (no row: sends go out at any hour, uncapped).
--     quiet_hours: null, or {"days": [1..7 ISO weekdays], "start": "08:00", "end": "20:00", "spreadMinutes": 30}:
--       sends may go out on those days from start (inclusive) to end (exclusive) in the contact's zone.
--     frequency_cap: null, or {"count": 1, "periodHours": 24}: at most count emails to one address in any
--       periodHours, across all the organisation's automations that are not transactional.
--   automations.quiet_hours: null: the organisation's; {"off": true}: none for this automation; else its own window
--     (the same shape as sending_rules.quiet_hours).
--   automations.transactional: exempt from the frequency cap (receipts, password resets); its sends are not counted.
--   automations.capped_action: what a capped send does: 'wait' for the next allowed instant, or 'skip' it.
--   contact_sends: one row per email the cap counts, written when the send is about to go out, in the transaction
--     that checks the cap under the address's lock (so two sends at one instant see each other). Keyed by the
--     send's effect key: a retry of the same send is the same row, never a second count. released_at: the send
--     did not go out (refused before DATA), so it no longer counts.
CREATE TABLE "sending_rules" (
  "org_id" TEXT NOT NULL,
  "quiet_hours" JSONB,
  "frequency_cap" JSONB,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "updated_by" TEXT,
  CONSTRAINT "sending_rules_pkey" PRIMARY KEY ("org_id"),
  CONSTRAINT "sending_rules_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations" ("id") ON DELETE CASCADE,
  CONSTRAINT "sending_rules_quiet_hours_check" CHECK ("quiet_hours" IS NULL OR jsonb_typeof("quiet_hours") = 'object'),
  CONSTRAINT "sending_rules_frequency_cap_check" CHECK ("frequency_cap" IS NULL OR jsonb_typeof("frequency_cap") = 'object')
);
SELECT holdfast_tenant_table('sending_rules');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "sending_rules" TO holdfast_web;
GRANT SELECT ON TABLE "sending_rules" TO holdfast_worker;

ALTER TABLE "automations" ADD COLUMN "quiet_hours" JSONB;
ALTER TABLE "automations" ADD CONSTRAINT "automations_quiet_hours_check" CHECK ("quiet_hours" IS NULL OR jsonb_typeof("quiet_hours") = 'object');
ALTER TABLE "automations" ADD COLUMN "transactional" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "automations" ADD COLUMN "capped_action" TEXT NOT NULL DEFAULT 'wait';
ALTER TABLE "automations" ADD CONSTRAINT "automations_capped_action_check" CHECK ("capped_action" IN ('wait', 'skip'));

CREATE TABLE "contact_sends" (
  "id" TEXT NOT NULL DEFAULT holdfast_ordered_id('csd_'),
  "org_id" TEXT NOT NULL,
  "address" TEXT NOT NULL,
  "effect_key" TEXT NOT NULL,
  "automation_id" TEXT NOT NULL,
  "run_id" TEXT NOT NULL,
  "step_id" TEXT NOT NULL,
  "sent_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "released_at" TIMESTAMPTZ(6),
  CONSTRAINT "contact_sends_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "contact_sends_address_check" CHECK ("address" = lower("address")),
  CONSTRAINT "contact_sends_automation_fkey" FOREIGN KEY ("org_id", "automation_id") REFERENCES "automations" ("org_id", "id") ON DELETE CASCADE
);
CREATE UNIQUE INDEX "contact_sends_effect_key" ON "contact_sends" ("org_id", "effect_key");
CREATE INDEX "contact_sends_address_idx" ON "contact_sends" ("org_id", "address", "sent_at") WHERE "released_at" IS NULL;
SELECT holdfast_tenant_table('contact_sends');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "contact_sends" TO holdfast_worker;
GRANT SELECT, DELETE ON TABLE "contact_sends" TO holdfast_web;
