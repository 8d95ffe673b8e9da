-- email templates (issue 44): an organisation's saved emails, a subject and a body with variables that the editor
-- copies into send_email steps ("Use a saved email"). A step holds its own copy: a published version never changes
-- because a saved email changed later; the step may remember which saved email it came from (config.savedEmail),
-- for display only.
--   name: unique per organisation, case-insensitively (two saved emails "Welcome 1" and "welcome 1" would read as one).
--   created_by, updated_by: "user:<email>" of the member who saved it.
CREATE TABLE "email_templates" (
  "id" TEXT NOT NULL DEFAULT holdfast_ordered_id('etp_'),
  "org_id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "subject" TEXT NOT NULL,
  "text" TEXT NOT NULL,
  "html" TEXT,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "created_by" TEXT NOT NULL,
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "updated_by" TEXT NOT NULL,
  CONSTRAINT "email_templates_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "email_templates_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations" ("id") ON DELETE CASCADE,
  CONSTRAINT "email_templates_name_check" CHECK (length(btrim("name")) BETWEEN 1 AND 100 AND "name" = btrim("name")),
  CONSTRAINT "email_templates_subject_check" CHECK (length("subject") BETWEEN 1 AND 1000),
  CONSTRAINT "email_templates_text_check" CHECK (length("text") <= 100000),
  CONSTRAINT "email_templates_html_check" CHECK ("html" IS NULL OR length("html") <= 200000)
);
CREATE UNIQUE INDEX "email_templates_name_key" ON "email_templates" ("org_id", lower("name"));
SELECT holdfast_tenant_table('email_templates');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "email_templates" TO holdfast_web;
GRANT SELECT ON TABLE "email_templates" TO holdfast_worker;
