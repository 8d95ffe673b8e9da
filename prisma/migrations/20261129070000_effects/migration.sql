-- The effect ledger: one row per effect identity (run/node/iteration, never the attempt). An effect is claimed
-- before the provider is called (in_flight, with its own lease and owner token), settled with the provider's
-- answer, or, when a claim's lease lapses without a settle, marked outcome_unknown: reconciled, re-sent with the
-- same key where the provider honours it, or parked for a person (needs_review). Never a fresh effect.
CREATE TABLE "effects" (
  "id" TEXT NOT NULL DEFAULT ('eff_' || replace(gen_random_uuid()::text, '-', '')),
  "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
  "run_id" TEXT NOT NULL REFERENCES "runs"("id") ON DELETE CASCADE,
  "step_id" TEXT NOT NULL,
  "key" TEXT NOT NULL,
  "kind" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "owner" TEXT,
  "lease_until" TIMESTAMPTZ(6),
  "attempts" INTEGER NOT NULL DEFAULT 1,
  "provider_idempotent" BOOLEAN NOT NULL,
  "result" JSONB,
  "error" JSONB,
  "first_attempt_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "settled_at" TIMESTAMPTZ(6),
  CONSTRAINT "effects_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "effects_key_key" UNIQUE ("org_id", "key"),
  CONSTRAINT "effects_status_check" CHECK (status IN ('in_flight', 'settled', 'outcome_unknown', 'needs_review')),
  CONSTRAINT "effects_lease_check" CHECK ((status = 'in_flight') = (lease_until IS NOT NULL AND owner IS NOT NULL))
);
CREATE INDEX "effects_run_idx" ON "effects" ("run_id");
CREATE INDEX "effects_unsettled_idx" ON "effects" ("lease_until") WHERE status = 'in_flight';
