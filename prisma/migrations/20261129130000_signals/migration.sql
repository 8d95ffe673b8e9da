-- Signals (issue 7): something other than time that a run waits for. One row per transport identity per
-- organisation (a duplicate delivery is stored once), with the correlation keys that lead to the run (an email
-- reply's In-Reply-To and References: the Message-ID of the email we sent). A signal that arrives before its run
-- reaches the waiting step stays unconsumed and is consumed when the step is reached.
CREATE TABLE "signals" (
    "id" TEXT NOT NULL DEFAULT ('sig_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
    "kind" TEXT NOT NULL,
    "identity" TEXT NOT NULL,
    "correlation_keys" TEXT[] NOT NULL DEFAULT '{}',
    "payload" JSONB NOT NULL,
    "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "consumed_at" TIMESTAMPTZ(6),
    "run_id" TEXT,
    "step_id" TEXT,
    CONSTRAINT "signals_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "signals_kind_check" CHECK (kind IN ('email_reply')),
    CONSTRAINT "signals_consumed_check" CHECK ((consumed_at IS NULL) = (step_id IS NULL))
);
CREATE UNIQUE INDEX "signals_org_id_identity_key" ON "signals"("org_id", "identity");
CREATE INDEX "signals_unconsumed_keys_idx" ON "signals" USING gin ("correlation_keys") WHERE consumed_at IS NULL;

-- The key a waiting step listens for (a reply wait: the Message-ID of the email it waits on).
ALTER TABLE "steps" ADD COLUMN "correlation_key" TEXT;
CREATE INDEX "steps_waiting_correlation_idx" ON "steps" ("org_id", "correlation_key") WHERE status = 'waiting' AND correlation_key IS NOT NULL;
