-- Every trigger is authenticated. An automation's trigger takes either Standard Webhooks signatures ('signed', the
-- default) or a random token in its URL ('url_token', for form tools that cannot sign). Both credentials exist from
-- the automation's creation, so switching modes never opens an unauthenticated window. A rotation keeps the previous
-- credential accepted until expires_at (24 hours); the current one has expires_at NULL.
ALTER TABLE "automations"
  ADD COLUMN "trigger_auth" TEXT NOT NULL DEFAULT 'signed',
  ADD CONSTRAINT "automations_trigger_auth_check" CHECK ("trigger_auth" IN ('signed', 'url_token'));

CREATE TABLE "trigger_credentials" (
  "id" TEXT NOT NULL DEFAULT ('tcr_' || replace(gen_random_uuid()::text, '-', '')),
  "org_id" TEXT NOT NULL,
  "automation_id" TEXT NOT NULL,
  "kind" TEXT NOT NULL CHECK ("kind" IN ('signing_secret', 'url_token')),
  "secret" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "expires_at" TIMESTAMPTZ(6),
  CONSTRAINT "trigger_credentials_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "trigger_credentials_automation_fkey" FOREIGN KEY ("org_id", "automation_id")
    REFERENCES "automations" ("org_id", "id") ON DELETE CASCADE
);
-- One current credential of each kind per automation.
CREATE UNIQUE INDEX "trigger_credentials_current_key" ON "trigger_credentials" ("automation_id", "kind") WHERE "expires_at" IS NULL;
CREATE INDEX "trigger_credentials_automation_idx" ON "trigger_credentials" ("org_id", "automation_id");

-- Existing automations: their configured secrets carry over (the first current, any others for the overlap);
-- those that had none (unsigned until now) get a fresh secret and token: 32 random bytes from two random UUIDs.
CREATE FUNCTION pg_temp.random32() RETURNS bytea LANGUAGE sql VOLATILE AS $$
  SELECT decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex')
$$;
INSERT INTO "trigger_credentials" ("org_id", "automation_id", "kind", "secret", "expires_at")
SELECT a.org_id, a.id, 'signing_secret', s.secret, CASE WHEN s.n = 1 THEN NULL ELSE now() + interval '24 hours' END
FROM "automations" a, unnest(a.webhook_secrets) WITH ORDINALITY AS s(secret, n);
INSERT INTO "trigger_credentials" ("org_id", "automation_id", "kind", "secret")
SELECT a.org_id, a.id, 'signing_secret', 'whsec_' || encode(pg_temp.random32(), 'base64')
FROM "automations" a WHERE cardinality(a.webhook_secrets) = 0;
INSERT INTO "trigger_credentials" ("org_id", "automation_id", "kind", "secret")
SELECT a.org_id, a.id, 'url_token', translate(rtrim(encode(pg_temp.random32(), 'base64'), '='), '+/', '-_')
FROM "automations" a;
ALTER TABLE "automations" DROP COLUMN "webhook_secrets";

-- The demo (seeded before triggers were authenticated) takes a URL token, as a new demo does: the README's curl uses
-- the URL `holdfast hooks url` prints.
UPDATE "automations" SET "trigger_auth" = 'url_token'
WHERE "slug" = 'demo-follow-up' AND "org_id" IN (SELECT "id" FROM "organisations" WHERE "slug" = 'demo');
