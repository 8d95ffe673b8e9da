-- The trigger panel's delivery log, sample payload and test runs (issue 15, item 5).
--
-- trigger_deliveries: what each request to a trigger URL came to, once its automation is identified (an unknown
--   organisation or automation writes nothing). Never a body: a refused request is unauthenticated or unusable, and
--   an attacker must not be able to store data here; an accepted one links to the run whose input holds the payload.
--   Kept to about the newest 50 per automation by the inserts themselves (sql/trigger-deliveries.ts): every 8th
--   delivery of an automation in a web process also deletes its rows beyond the newest 50, in the same statement,
--   skipping any that another insert is deleting (start/deliveries.ts says why not on every insert).
--   seq: insertion order, for listing and pruning (received_at is the transaction's start: ties are common).
--   webhook_id is the sender's header, kept only when the request carried the trigger's credential; body_bytes is
--   NULL for a body refused as too large that declared no length (reading stopped at the limit).
CREATE TABLE "trigger_deliveries" (
  "id" TEXT NOT NULL DEFAULT ('dlv_' || replace(gen_random_uuid()::text, '-', '')),
  "seq" BIGINT GENERATED ALWAYS AS IDENTITY,
  "org_id" TEXT NOT NULL,
  "automation_id" TEXT NOT NULL,
  "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "outcome" TEXT NOT NULL,
  "status" INTEGER NOT NULL,
  "reason" TEXT,
  "start_key" TEXT,
  "webhook_id" TEXT,
  "run_id" TEXT,
  "content_type" TEXT,
  "body_bytes" INTEGER,
  CONSTRAINT "trigger_deliveries_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "trigger_deliveries_outcome_check" CHECK ("outcome" IN ('accepted', 'duplicate', 'refused')),
  -- A refusal says why in a sentence and never names a run; an accepted or repeated delivery named one when written
  -- (run_id goes NULL only if that run is deleted).
  CONSTRAINT "trigger_deliveries_refusal_check" CHECK (
    ("outcome" = 'refused' AND "reason" IS NOT NULL AND "run_id" IS NULL AND "start_key" IS NULL) OR "outcome" <> 'refused'),
  CONSTRAINT "trigger_deliveries_sizes_check" CHECK (
    ("body_bytes" IS NULL OR "body_bytes" >= 0) AND "status" BETWEEN 100 AND 599 AND length("reason") <= 500 AND length("content_type") <= 100
    AND length("webhook_id") <= 300 AND length("start_key") <= 400),
  CONSTRAINT "trigger_deliveries_automation_fkey" FOREIGN KEY ("org_id", "automation_id")
    REFERENCES "automations" ("org_id", "id") ON DELETE CASCADE,
  CONSTRAINT "trigger_deliveries_run_fkey" FOREIGN KEY ("org_id", "run_id")
    REFERENCES "runs" ("org_id", "id") ON DELETE SET NULL ("run_id")
);
-- The panel's list and the prune both read an automation's newest rows first.
CREATE INDEX "trigger_deliveries_automation_idx" ON "trigger_deliveries" ("org_id", "automation_id", "seq" DESC);
-- ON DELETE SET NULL of a run finds its deliveries by this.
CREATE INDEX "trigger_deliveries_run_idx" ON "trigger_deliveries" ("org_id", "run_id") WHERE "run_id" IS NOT NULL;

SELECT holdfast_tenant_table('trigger_deliveries');
-- The default privileges of 20261201050000_tenancy grant these already when the same role migrates; said here too.
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "trigger_deliveries" TO holdfast_web, holdfast_worker;
GRANT USAGE, SELECT ON SEQUENCE "trigger_deliveries_seq_seq" TO holdfast_web, holdfast_worker;

-- The payload the editor's variable picker reads input.* from: the first accepted delivery's input, or the one
-- chosen with "Use as sample", and the input of a test run.
ALTER TABLE "automations" ADD COLUMN "sample_input" JSONB;
ALTER TABLE "automations" ADD CONSTRAINT "automations_sample_input_check"
  CHECK ("sample_input" IS NULL OR jsonb_typeof("sample_input") = 'object');

-- A run started from the editor's Test run (the sample as input, a fresh start key): the runs list marks it.
ALTER TABLE "runs" ADD COLUMN "test" BOOLEAN NOT NULL DEFAULT false;
