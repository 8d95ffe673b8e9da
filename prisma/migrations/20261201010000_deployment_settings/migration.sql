-- Deployment-wide settings (not tenant data, no org_id): one row. key_check is an HMAC of a fixed text under the
-- deployment's secret key, so a process started with a different key is refused at start-up (keys/key-check.ts).
CREATE TABLE "deployment_settings" (
  "id" SMALLINT NOT NULL DEFAULT 1 CHECK ("id" = 1),
  "key_check" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "deployment_settings_pkey" PRIMARY KEY ("id")
);
