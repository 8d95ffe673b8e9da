-- The builder (issue 8): one draft per automation, edited and autosaved (revision: a save based on an older revision
-- is refused, so two tabs never overwrite each other silently); publishing copies it into a new immutable version.
CREATE TABLE "automation_drafts" (
    "automation_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
    "graph" JSONB NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "updated_by" TEXT,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "automation_drafts_pkey" PRIMARY KEY ("automation_id"),
    CONSTRAINT "automation_drafts_automation_fkey" FOREIGN KEY ("org_id", "automation_id") REFERENCES "automations"("org_id", "id")
);

-- Moving in-flight runs from one published version to another: the plan (step mapping, what happens to runs on a
-- removed step) and its progress; runs with an effect in flight are deferred and moved by a later apply.
CREATE TABLE "run_migrations" (
    "id" TEXT NOT NULL DEFAULT ('mig_' || replace(gen_random_uuid()::text, '-', '')),
    "org_id" TEXT NOT NULL REFERENCES "organisations"("id"),
    "automation_id" TEXT NOT NULL,
    "from_version_id" TEXT NOT NULL,
    "to_version_id" TEXT NOT NULL,
    "mapping" JSONB NOT NULL,
    "removed_rule" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "migrated" INTEGER NOT NULL DEFAULT 0,
    "cancelled" INTEGER NOT NULL DEFAULT 0,
    "stayed" INTEGER NOT NULL DEFAULT 0,
    "deferred" INTEGER NOT NULL DEFAULT 0,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "run_migrations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "run_migrations_status_check" CHECK (status IN ('open', 'done'))
);
CREATE INDEX "run_migrations_org_automation_idx" ON "run_migrations"("org_id", "automation_id", "created_at");
CREATE INDEX "runs_running_version_idx" ON "runs"("version_id") WHERE status = 'running';
