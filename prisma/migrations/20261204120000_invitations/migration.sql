-- invitations (security finding L1): an owner no longer adds a person by email; they invite, and the person accepts.
--   Adding an existing account straight away looked that account up across organisations (the answer said whether
--   it existed, and the member list then showed its name) and made a membership nobody agreed to.
--   A row per invitation: the organisation, the address (lowercased, `email`; as the owner typed it, `email_typed`),
--   the role it grants, who invited, and a link token of 32 random bytes of which only the sha256 is kept
--   (`token_hash`). It is usable until `expires_at` (7 days after it was made, by this database's clock) and at most
--   once: accepting sets accepted_at in a statement that matches only an open, unexpired row. At most one open
--   invitation per organisation and address: inviting again renews that row (new token, new expiry).
CREATE TABLE "invitations" (
  "id" TEXT NOT NULL DEFAULT holdfast_ordered_id('inv_'),
  "org_id" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "email_typed" TEXT NOT NULL,
  "role" TEXT NOT NULL,
  "invited_by" TEXT,
  "token_hash" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "expires_at" TIMESTAMPTZ(6) NOT NULL,
  "accepted_at" TIMESTAMPTZ(6),
  "accepted_by" TEXT,
  "declined_at" TIMESTAMPTZ(6),
  "revoked_at" TIMESTAMPTZ(6),
  CONSTRAINT "invitations_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "invitations_email_lower_check" CHECK ("email" = lower("email") AND lower("email_typed") = "email"),
  CONSTRAINT "invitations_role_check" CHECK ("role" IN ('owner', 'editor', 'approver', 'viewer')),
  CONSTRAINT "invitations_token_hash_check" CHECK ("token_hash" ~ '^[0-9a-f]{64}$'),
  CONSTRAINT "invitations_expiry_check" CHECK ("expires_at" > "created_at"),
  -- Ended at most one way; only an accepted invitation names who accepted it (null again if that user is deleted).
  CONSTRAINT "invitations_end_check" CHECK (
    num_nonnulls("accepted_at", "declined_at", "revoked_at") <= 1 AND ("accepted_by" IS NULL OR "accepted_at" IS NOT NULL)),
  CONSTRAINT "invitations_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations" ("id") ON DELETE CASCADE,
  CONSTRAINT "invitations_invited_by_fkey" FOREIGN KEY ("invited_by") REFERENCES "users" ("id") ON DELETE SET NULL,
  CONSTRAINT "invitations_accepted_by_fkey" FOREIGN KEY ("accepted_by") REFERENCES "users" ("id") ON DELETE SET NULL
);
CREATE UNIQUE INDEX "invitations_token_hash_key" ON "invitations" ("token_hash");
-- One open invitation per organisation and address (inviting again renews it: sql/invitations.ts).
CREATE UNIQUE INDEX "invitations_open_key" ON "invitations" ("org_id", "email")
  WHERE "accepted_at" IS NULL AND "declined_at" IS NULL AND "revoked_at" IS NULL;

SELECT holdfast_tenant_table('invitations');
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "invitations" TO holdfast_web, holdfast_worker;

-- The organisation of the invitation whose link token hashes to p_token_hash (none: no such invitation). The person
-- opening the link is not yet a member, so the web's session scope cannot see the row; holding the link is the
-- proof, and this is the one thing it reveals before the web scopes itself to that organisation. SECURITY DEFINER:
-- it reads invitations whatever the caller may see. Live body: packages/core/src/sql/functions/invitation_org.sql.
CREATE OR REPLACE FUNCTION holdfast_invitation_org(p_token_hash text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT org_id FROM invitations WHERE token_hash = p_token_hash
$$;
REVOKE ALL ON FUNCTION holdfast_invitation_org(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION holdfast_invitation_org(text) TO holdfast_web, holdfast_worker;
