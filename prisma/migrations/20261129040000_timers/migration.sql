-- Timers: the intent (rule, zone, spread, the instant the wait began) and the instant (due_at, UTC) side by side,
-- so a zone or tz-rule change can recompute the instant. wake counts recomputes: a fast-path job carries it and
-- fires only if it is still current. A wait step stays 'waiting' until its timer fires.

ALTER TABLE "steps" DROP CONSTRAINT "steps_status_check";
ALTER TABLE "steps" ADD CONSTRAINT "steps_status_check"
  CHECK (status IN ('ready', 'running', 'waiting', 'done', 'failed', 'cancelled'));

ALTER TABLE "organisations" ADD COLUMN "last_timer_served_at" TIMESTAMPTZ(6);

CREATE TABLE "timers" (
  "id" TEXT NOT NULL DEFAULT ('tmr_' || replace(gen_random_uuid()::text, '-', '')),
  "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
  "run_id" TEXT NOT NULL REFERENCES "runs"("id") ON DELETE CASCADE,
  "step_id" TEXT NOT NULL REFERENCES "steps"("id") ON DELETE CASCADE,
  "rule" JSONB NOT NULL,
  "zone" TEXT NOT NULL,
  "spread_seconds" INTEGER NOT NULL DEFAULT 0,
  "spread_offset_seconds" INTEGER NOT NULL DEFAULT 0,
  "anchor_at" TIMESTAMPTZ(6) NOT NULL,
  "due_at" TIMESTAMPTZ(6) NOT NULL,
  "wake" INTEGER NOT NULL DEFAULT 1,
  "fired_at" TIMESTAMPTZ(6),
  "fired_by" TEXT,
  "lateness_ms" DOUBLE PRECISION,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "timers_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "timers_step_key" UNIQUE ("step_id"),
  CONSTRAINT "timers_spread_check" CHECK (spread_seconds >= 0 AND spread_offset_seconds >= 0 AND wake >= 1),
  CONSTRAINT "timers_fired_check" CHECK ((fired_at IS NULL) = (lateness_ms IS NULL))
);

-- The due sweep's per-organisation lateral scan and the fast path's lookups touch only unfired timers.
CREATE INDEX "timers_due_idx" ON "timers" ("org_id", "due_at") WHERE fired_at IS NULL;
CREATE INDEX "timers_run_idx" ON "timers" ("run_id");
