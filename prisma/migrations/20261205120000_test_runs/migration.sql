-- test runs (issue 40): a test run plays the journey with every outside effect simulated.
--   One row per test run (runs.test): who started it, the script its simulated effects answer with (each call's
--   answer, whether to call the model, the approvals' decisions and the replies, for "Play to the end"), where
--   "Send to me" sends (the tester's own address, never the contact's), and its virtual clock: the run's "now" is
--   PostgreSQL's now() plus clock_offset_ms, moved forward when a wait is skipped, so every later wait counts from the
--   instant the skipped one would have fired. A test run writes no contact: `contact` is the sample's address and zone
--   when no stored contact has that address (one that has is linked read only), for its templates and waits.
--   The claim functions (holdfast_step_claim, holdfast_step_settle: live bodies in packages/core/src/sql/functions)
--   now say whether the claimed step's run is a test, so a worker simulates its effect without another read.
CREATE TABLE "test_runs" (
  "run_id" TEXT NOT NULL,
  "org_id" TEXT NOT NULL,
  "started_by" TEXT NOT NULL,
  "script" JSONB NOT NULL DEFAULT '{}',
  "send_to" TEXT,
  "contact" JSONB,
  "clock_offset_ms" BIGINT NOT NULL DEFAULT 0,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "test_runs_pkey" PRIMARY KEY ("run_id"),
  CONSTRAINT "test_runs_clock_check" CHECK ("clock_offset_ms" >= 0),
  CONSTRAINT "test_runs_send_to_check" CHECK ("send_to" IS NULL OR "send_to" ~ '^[^\s@,;<>"()]+@[^\s@,;<>"()]+$'),
  CONSTRAINT "test_runs_run_fkey" FOREIGN KEY ("org_id", "run_id") REFERENCES "runs" ("org_id", "id") ON DELETE CASCADE
);

SELECT holdfast_tenant_table('test_runs');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "test_runs" TO holdfast_web, holdfast_worker;

-- A test run's approval is decided on the test run's page, by the tester as one of its approvers: 'test'.
ALTER TABLE "approvals" DROP CONSTRAINT "approvals_via_check";
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_via_check" CHECK ("decided_via" IS NULL OR "decided_via" IN ('slack', 'inbox', 'deadline', 'run', 'test'));
