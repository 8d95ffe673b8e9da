import type { Db, Tx } from "@holdfast/db";
import type { Role } from "./memberships";

/**
 * The invitations table: an owner's offer of a role in one organisation, accepted by the person through a link. Only
 * the sha256 of the link's token is stored. An invitation is open while it is neither accepted, declined nor revoked,
 * and usable while it is open and `expires_at > now()` (the database clock). One open invitation per organisation
 * and address (invitations_open_key).
 */

/** How long a link works, by the database clock. */
export const invitationDays = 7;

/**
 * Invites the (lowercased) address, or renews its open invitation (expired or not): a new token, role, inviter and 7
 * days from now, so the earlier link stops working. One statement: two clicks at once leave one open invitation.
 */
export async function invitationsUpsertOpen(
  tx: Db | Tx,
  i: { orgId: string; email: string; emailTyped: string; role: Role; invitedBy: string; tokenHash: string },
): Promise<{ id: string; expiresAt: Date }> {
  const rows = await tx.$queryRaw<{ id: string; expiresAt: Date }[]>`
    INSERT INTO invitations (org_id, email, email_typed, role, invited_by, token_hash, expires_at)
    VALUES (${i.orgId}, ${i.email}, ${i.emailTyped}, ${i.role}, ${i.invitedBy}, ${i.tokenHash}, now() + make_interval(days => ${invitationDays}))
    ON CONFLICT (org_id, email) WHERE accepted_at IS NULL AND declined_at IS NULL AND revoked_at IS NULL
    DO UPDATE SET email_typed = EXCLUDED.email_typed, role = EXCLUDED.role, invited_by = EXCLUDED.invited_by,
                  token_hash = EXCLUDED.token_hash, created_at = now(), expires_at = EXCLUDED.expires_at
    RETURNING id, expires_at AS "expiresAt"`;
  return rows[0] as { id: string; expiresAt: Date };
}

export interface OpenInvitation {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  expired: boolean;
}

/** The organisation's open invitations (expired ones too, marked, until renewed or revoked), newest first. */
export function invitationsListOpen(db: Db | Tx, orgId: string): Promise<OpenInvitation[]> {
  return db.$queryRaw<OpenInvitation[]>`
    SELECT id, email_typed AS email, role, created_at AS "createdAt", expires_at AS "expiresAt", expires_at <= now() AS expired
    FROM invitations
    WHERE org_id = ${orgId} AND accepted_at IS NULL AND declined_at IS NULL AND revoked_at IS NULL
    ORDER BY created_at DESC`;
}

/** Revokes an open invitation of the organisation; false when there is none with this id (or it already ended). */
export async function invitationsRevokeIfOpen(db: Db | Tx, orgId: string, id: string): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE invitations SET revoked_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND accepted_at IS NULL AND declined_at IS NULL AND revoked_at IS NULL`;
  return n > 0;
}

/** The organisation of the invitation with this token hash, whoever may see it (holdfast_invitation_org). */
export async function invitationsOrgOfToken(db: Db | Tx, tokenHash: string): Promise<string | undefined> {
  const rows = await db.$queryRaw<{ orgId: string | null }[]>`SELECT holdfast_invitation_org(${tokenHash}) AS "orgId"`;
  return rows[0]?.orgId ?? undefined;
}

/** An invitation as its link shows it, with its state judged by the database clock. */
export interface InvitationRow {
  id: string;
  orgId: string;
  orgSlug: string;
  orgName: string;
  email: string;
  role: Role;
  expiresAt: Date;
  state: "open" | "expired" | "accepted" | "declined" | "revoked";
  acceptedAt: Date | null;
  acceptedBy: string | null;
}

export async function invitationsFindByToken(db: Db | Tx, orgId: string, tokenHash: string): Promise<InvitationRow | undefined> {
  const rows = await db.$queryRaw<InvitationRow[]>`
    SELECT i.id, i.org_id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", i.email, i.role, i.expires_at AS "expiresAt",
           CASE WHEN i.accepted_at IS NOT NULL THEN 'accepted' WHEN i.declined_at IS NOT NULL THEN 'declined'
                WHEN i.revoked_at IS NOT NULL THEN 'revoked' WHEN i.expires_at <= now() THEN 'expired' ELSE 'open' END AS state,
           i.accepted_at AS "acceptedAt", i.accepted_by AS "acceptedBy"
    FROM invitations i JOIN organisations o ON o.id = i.org_id
    WHERE i.org_id = ${orgId} AND i.token_hash = ${tokenHash}`;
  return rows[0];
}

/**
 * Uses the invitation once: marks it accepted by the user only while it is open and unexpired and the user's address
 * is the invited one. Its organisation and role, or undefined when any of that fails (nothing is written).
 */
export async function invitationsAcceptIfUsable(
  tx: Tx,
  orgId: string,
  tokenHash: string,
  userId: string,
): Promise<{ id: string; role: Role; acceptedAt: Date } | undefined> {
  const rows = await tx.$queryRaw<{ id: string; role: Role; acceptedAt: Date }[]>`
    UPDATE invitations SET accepted_at = now(), accepted_by = ${userId}
    WHERE org_id = ${orgId} AND token_hash = ${tokenHash}
      AND accepted_at IS NULL AND declined_at IS NULL AND revoked_at IS NULL AND expires_at > now()
      AND email = (SELECT email FROM users WHERE id = ${userId})
    RETURNING id, role, accepted_at AS "acceptedAt"`;
  return rows[0];
}

/** Declines the invitation for the user, under the same conditions as accepting; false when they fail. */
export async function invitationsDeclineIfUsable(db: Db | Tx, orgId: string, tokenHash: string, userId: string): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE invitations SET declined_at = now()
    WHERE org_id = ${orgId} AND token_hash = ${tokenHash}
      AND accepted_at IS NULL AND declined_at IS NULL AND revoked_at IS NULL AND expires_at > now()
      AND email = (SELECT email FROM users WHERE id = ${userId})`;
  return n > 0;
}
