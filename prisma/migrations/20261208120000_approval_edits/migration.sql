-- edit before approving (issue 44): an approver may edit the draft of an email an approval approves (its subject
-- and text), then approve it.
--   approvals.email_draft: the email the approval shows now, as rendered parts {"to", "subject", "text", "html"}
--     (text/html null when absent); after an edit, the edited email (html null: an edit is plain text). The send
--     step of an edited approval sends exactly this subject and text, to the recipient it renders (which must be the
--     one shown). Null: an approval that approves no email (or was requested before this column).
--   A contact's erasure scrubs both (email_draft null, the edits' texts '(erased)'), as it scrubs the content.
--   approval_edits: one row per edit, written in the transaction that changes the approval's content, digest and
--     email digest under its lock, with its approval.edited timeline row. The original and edited subject/text, who
--     (a user), via 'inbox' or 'slack', when, and the approval's content digest before and after.
ALTER TABLE "approvals" ADD COLUMN "email_draft" JSONB;
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_email_draft_check" CHECK ("email_draft" IS NULL OR jsonb_typeof("email_draft") = 'object');

-- Tenant foreign keys include org_id: approvals gets the (org_id, id) key they reference.
CREATE UNIQUE INDEX "approvals_org_id_id_key" ON "approvals" ("org_id", "id");

CREATE TABLE "approval_edits" (
  "id" TEXT NOT NULL DEFAULT holdfast_ordered_id('aed_'),
  "org_id" TEXT NOT NULL,
  "approval_id" TEXT NOT NULL,
  "original_subject" TEXT NOT NULL,
  "original_text" TEXT,
  "edited_subject" TEXT NOT NULL,
  "edited_text" TEXT NOT NULL,
  "had_html" BOOLEAN NOT NULL DEFAULT false,
  "edited_by" TEXT NOT NULL,
  "edited_by_name" TEXT NOT NULL,
  "via" TEXT NOT NULL,
  "digest_before" TEXT NOT NULL,
  "digest_after" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  CONSTRAINT "approval_edits_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "approval_edits_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations" ("id") ON DELETE CASCADE,
  CONSTRAINT "approval_edits_approval_fkey" FOREIGN KEY ("org_id", "approval_id") REFERENCES "approvals" ("org_id", "id") ON DELETE CASCADE,
  CONSTRAINT "approval_edits_via_check" CHECK ("via" IN ('inbox', 'slack')),
  CONSTRAINT "approval_edits_changed_check" CHECK ("digest_before" <> "digest_after")
);
CREATE INDEX "approval_edits_approval_idx" ON "approval_edits" ("org_id", "approval_id", "created_at");
SELECT holdfast_tenant_table('approval_edits');
-- An edit is history: written once (by the web: the inbox, Slack's interactions; by the CLI and tests as the worker)
-- and never deleted; its texts are only ever overwritten by a contact's erasure ('(erased)').
REVOKE DELETE ON TABLE "approval_edits" FROM holdfast_web, holdfast_worker;
GRANT SELECT, INSERT, UPDATE ON TABLE "approval_edits" TO holdfast_web, holdfast_worker;
