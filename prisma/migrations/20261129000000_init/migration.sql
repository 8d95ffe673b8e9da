-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "organisations" (
    "id" TEXT NOT NULL DEFAULT ('org_' || replace(gen_random_uuid()::text, '-', '')),
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organisations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "automations" (
    "id" TEXT NOT NULL DEFAULT ('aut_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "webhook_secrets" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "automations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "automation_versions" (
    "id" TEXT NOT NULL DEFAULT ('ver_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL,
    "automation_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "graph" JSONB NOT NULL,
    "published_at" TIMESTAMPTZ(6),
    "published_by" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "automation_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runs" (
    "id" TEXT NOT NULL DEFAULT ('run_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL,
    "automation_id" TEXT NOT NULL,
    "version_id" TEXT NOT NULL,
    "start_key" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "input" JSONB NOT NULL,
    "error" JSONB,
    "cancel_requested_at" TIMESTAMPTZ(6),
    "cancel_reason" TEXT,
    "swept_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "steps" (
    "id" TEXT NOT NULL DEFAULT ('stp_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "iteration" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "lane" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'ready',
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL,
    "owner" TEXT,
    "lease_until" TIMESTAMPTZ(6),
    "available_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "output" JSONB,
    "error" JSONB,
    "advanced_at" TIMESTAMPTZ(6),
    "woken_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(6),

    CONSTRAINT "steps_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" BIGSERIAL NOT NULL,
    "org_id" TEXT NOT NULL,
    "run_id" TEXT,
    "topic" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "available_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(6),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_events" (
    "id" BIGSERIAL NOT NULL,
    "org_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "step_id" TEXT,
    "node_id" TEXT,
    "attempt" INTEGER,
    "type" TEXT NOT NULL,
    "lane" TEXT,
    "worker" TEXT,
    "data" JSONB,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leader_leases" (
    "name" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "lease_until" TIMESTAMPTZ(6) NOT NULL,
    "acquired_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "leader_leases_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "organisations_slug_key" ON "organisations"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "automations_org_id_slug_key" ON "automations"("org_id", "slug");

-- CreateIndex
CREATE UNIQUE INDEX "automations_org_id_id_key" ON "automations"("org_id", "id");

-- CreateIndex
CREATE INDEX "automation_versions_org_id_automation_id_published_at_idx" ON "automation_versions"("org_id", "automation_id", "published_at");

-- CreateIndex
CREATE UNIQUE INDEX "automation_versions_automation_id_version_key" ON "automation_versions"("automation_id", "version");

-- CreateIndex
CREATE INDEX "runs_org_id_created_at_idx" ON "runs"("org_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "runs_status_updated_at_idx" ON "runs"("status", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "runs_org_id_start_key_key" ON "runs"("org_id", "start_key");

-- CreateIndex
CREATE INDEX "steps_status_lease_until_idx" ON "steps"("status", "lease_until");

-- CreateIndex
CREATE INDEX "steps_lane_status_available_at_idx" ON "steps"("lane", "status", "available_at");

-- CreateIndex
CREATE UNIQUE INDEX "steps_run_id_node_id_iteration_key" ON "steps"("run_id", "node_id", "iteration");

-- CreateIndex
CREATE INDEX "run_events_run_id_id_idx" ON "run_events"("run_id", "id");

-- AddForeignKey
ALTER TABLE "automations" ADD CONSTRAINT "automations_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "automation_versions" ADD CONSTRAINT "automation_versions_org_id_automation_id_fkey" FOREIGN KEY ("org_id", "automation_id") REFERENCES "automations"("org_id", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------------------------
-- Hand-written: what Prisma cannot express. Keep below the generated part.
-- ---------------------------------------------------------------------------------------------------------------

-- Tenancy and integrity: every child row points at its run and organisation.
ALTER TABLE "runs" ADD CONSTRAINT "runs_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id");
ALTER TABLE "runs" ADD CONSTRAINT "runs_version_fkey" FOREIGN KEY ("version_id") REFERENCES "automation_versions"("id");
ALTER TABLE "steps" ADD CONSTRAINT "steps_run_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE;
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_run_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE;
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id");

-- State combinations the code relies on.
ALTER TABLE "runs" ADD CONSTRAINT "runs_status_check"
  CHECK (status IN ('running', 'completed', 'failed', 'cancelled'));
ALTER TABLE "runs" ADD CONSTRAINT "runs_finished_check"
  CHECK ((status = 'running') = (finished_at IS NULL));
ALTER TABLE "steps" ADD CONSTRAINT "steps_status_check"
  CHECK (status IN ('ready', 'running', 'done', 'failed', 'cancelled'));
ALTER TABLE "steps" ADD CONSTRAINT "steps_lease_check"
  CHECK (CASE WHEN status = 'running' THEN lease_until IS NOT NULL AND owner IS NOT NULL
              ELSE lease_until IS NULL AND owner IS NULL END);
ALTER TABLE "steps" ADD CONSTRAINT "steps_attempt_check" CHECK (attempt >= 0 AND max_attempts >= 1);
ALTER TABLE "steps" ADD CONSTRAINT "steps_iteration_check" CHECK (iteration >= 1);
ALTER TABLE "automation_versions" ADD CONSTRAINT "automation_versions_version_check" CHECK (version >= 1);

-- The relay's scan and the sweeper's scans touch only live rows.
CREATE INDEX "outbox_unsent_idx" ON "outbox" ("id") WHERE sent_at IS NULL;
CREATE INDEX "outbox_unsent_run_idx" ON "outbox" ("run_id") WHERE sent_at IS NULL;
CREATE INDEX "steps_settled_unadvanced_idx" ON "steps" ("run_id") WHERE advanced_at IS NULL AND status IN ('done', 'failed');
CREATE INDEX "runs_running_idx" ON "runs" ("updated_at") WHERE status = 'running';
CREATE INDEX "steps_run_idx" ON "steps" ("run_id");

-- A published version never changes: refuse UPDATE and DELETE in the database, not only in code.
CREATE FUNCTION holdfast_refuse_published_version_change() RETURNS trigger AS $$
BEGIN
  IF OLD.published_at IS NOT NULL THEN
    RAISE EXCEPTION 'automation version % (v%) is published and immutable', OLD.id, OLD.version
      USING ERRCODE = 'HF001';
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER automation_versions_immutable
  BEFORE UPDATE OR DELETE ON "automation_versions"
  FOR EACH ROW EXECUTE FUNCTION holdfast_refuse_published_version_change();

-- Wake the relay as soon as intents commit (one notification per statement; PostgreSQL folds duplicates within a
-- transaction). The relay also polls, so a missed notification only costs latency.
CREATE FUNCTION holdfast_notify_outbox() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('holdfast_outbox', '');
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER outbox_notify AFTER INSERT ON "outbox"
  FOR EACH STATEMENT EXECUTE FUNCTION holdfast_notify_outbox();
