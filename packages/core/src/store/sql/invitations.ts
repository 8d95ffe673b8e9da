import type { Db, Tx } from "@holdfast/db";
import type { Role } from "./memberships";

/**
 * The invitations table: an owner's offer of a role in one organisation, accepted by the person through a link. Only
 * the sha256 of the link's token is stored. An invitation is open while it is neither accepted, declined nor revoked,
 * and usable while it is open and `expires_at > now()` (the database clock). One open invitation per organisation
 * and address (invitations_open_key). With a system mailbox the row is also its email's outbox (email_status), and
 * its link is made only when the sweeper claims it to send (migration 20261205100000_invitation_email).
 */

/** How long a link works, by the database clock. */
export const invitationDays = 7;

/** How a link reaches the person: shown to the owner (its token's hash given), or emailed by the sweeper. */
export type InvitationDelivery = { kind: "link"; tokenHash: string } | { kind: "email"; linkBase: string };

/**
 * Invites the (lowercased) address, or renews its open invitation (expired or not): role, inviter and 7 days from
 * now, and a new link, so the earlier link stops working. Shown to the owner: the new token's hash. Emailed: no link
 * yet (token_hash NULL) and an email owed afresh (attempts 0): the sender makes the link when it claims the row.
 * One statement: two clicks at once leave one open invitation.
 */
export async function invitationsUpsertOpen(
  tx: Db | Tx,
  i: { orgId: string; email: string; emailTyped: string; role: Role; invitedBy: string; delivery: InvitationDelivery },
): Promise<{ id: string; expiresAt: Date }> {
  const tokenHash = i.delivery.kind === "link" ? i.delivery.tokenHash : null;
  const emailStatus = i.delivery.kind === "email" ? "pending" : null;
  const linkBase = i.delivery.kind === "email" ? i.delivery.linkBase : null;
  const rows = await tx.$queryRaw<{ id: string; expiresAt: Date }[]>`
    INSERT INTO invitations (org_id, email, email_typed, role, invited_by, token_hash, expires_at, email_status, link_base)
    VALUES (${i.orgId}, ${i.email}, ${i.emailTyped}, ${i.role}, ${i.invitedBy}, ${tokenHash}, now() + make_interval(days => ${invitationDays}),
            ${emailStatus}, ${linkBase})
    ON CONFLICT (org_id, email) WHERE accepted_at IS NULL AND declined_at IS NULL AND revoked_at IS NULL
    DO UPDATE SET email_typed = EXCLUDED.email_typed, role = EXCLUDED.role, invited_by = EXCLUDED.invited_by,
                  token_hash = EXCLUDED.token_hash, created_at = now(), expires_at = EXCLUDED.expires_at,
                  email_status = EXCLUDED.email_status, email_attempts = 0, email_claimed_until = NULL,
                  email_sent_at = NULL, email_problem = NULL, link_base = EXCLUDED.link_base
    RETURNING id, expires_at AS "expiresAt"`;
  return rows[0] as { id: string; expiresAt: Date };
}

/** Why an invitation's email did not go (a code: the app says it in words). */
export type InvitationEmailProblem = "no_mailbox" | "egress_refused" | "unreachable" | "login_refused" | "address_refused" | "message_refused" | "unknown";

export interface OpenInvitation {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  expired: boolean;
  /** null: the link was shown to the owner. */
  emailStatus: "pending" | "sending" | "sent" | "failed" | null;
  emailAttempts: number;
  emailSentAt: Date | null;
  emailProblem: InvitationEmailProblem | null;
}

/** The organisation's open invitations (expired ones too, marked, until renewed or revoked), newest first. */
export function invitationsListOpen(db: Db | Tx, orgId: string): Promise<OpenInvitation[]> {
  return db.$queryRaw<OpenInvitation[]>`
    SELECT id, email_typed AS email, role, created_at AS "createdAt", expires_at AS "expiresAt", expires_at <= now() AS expired,
           email_status AS "emailStatus", email_attempts AS "emailAttempts", email_sent_at AS "emailSentAt", email_problem AS "emailProblem"
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

/** An invitation whose email a sender claimed, with the token hash it set and what the email says. */
export interface ClaimedInvitation {
  id: string;
  /** Which of the hashes given to the claim is this row's (1-based): the sender holds the matching token. */
  slot: number;
  tokenHash: string;
  orgName: string;
  /** The inviter's name (null: their account was deleted since). */
  inviterName: string | null;
  /** As the owner typed it. */
  email: string;
  role: Role;
  expiresAt: Date;
  attempts: number;
  linkBase: string | null;
}

/**
 * Takes up to `tokenHashes.length` open, unexpired invitations whose email is owed (pending, or claimed by a sender
 * whose lease lapsed) for `leaseSeconds`, SKIP LOCKED so two senders never take the same one, and gives each its
 * link in the same statement: the n-th row taken gets the n-th hash, whose token only the sender holds. A link
 * made by an earlier claim (a retry, a lapsed sender) stops working here.
 */
export function invitationsClaimOwedEmail(tx: Tx, tokenHashes: string[], leaseSeconds: number, maxAttempts: number): Promise<ClaimedInvitation[]> {
  return tx.$queryRaw<ClaimedInvitation[]>`
    WITH picked AS (
      SELECT id, created_at FROM invitations
      WHERE (email_status = 'pending' OR (email_status = 'sending' AND email_claimed_until < now()))
        AND email_attempts < ${maxAttempts}
        AND accepted_at IS NULL AND declined_at IS NULL AND revoked_at IS NULL AND expires_at > now()
      ORDER BY created_at, id LIMIT ${tokenHashes.length}
      FOR UPDATE SKIP LOCKED
    ), numbered AS (
      SELECT id, row_number() OVER (ORDER BY created_at, id) AS slot FROM picked
    ), claimed AS (
      UPDATE invitations i SET email_status = 'sending', email_attempts = i.email_attempts + 1, email_problem = NULL,
                              email_claimed_until = now() + make_interval(secs => ${leaseSeconds}), token_hash = h.hash
      FROM numbered n JOIN unnest(${tokenHashes}::text[]) WITH ORDINALITY AS h(hash, slot) ON h.slot = n.slot
      WHERE i.id = n.id
      RETURNING i.id, n.slot, i.token_hash, i.org_id, i.invited_by, i.email_typed, i.role, i.expires_at, i.email_attempts, i.link_base
    )
    SELECT cl.id, cl.slot::int AS slot, cl.token_hash AS "tokenHash", o.name AS "orgName", u.name AS "inviterName",
           cl.email_typed AS email, cl.role, cl.expires_at AS "expiresAt", cl.email_attempts AS attempts, cl.link_base AS "linkBase"
    FROM claimed cl JOIN organisations o ON o.id = cl.org_id LEFT JOIN users u ON u.id = cl.invited_by`;
}

/**
 * The email went, or did not (with why: 'pending' to try again, 'failed' for good); only by the claim that took it,
 * named by the link it made: renewed since (Send again) or claimed by another sender, nothing is written.
 */
export function invitationsSettleEmail(
  tx: Tx,
  id: string,
  tokenHash: string,
  outcome: { status: "sent" } | { status: "pending" | "failed"; problem: InvitationEmailProblem },
): Promise<number> {
  const problem = outcome.status === "sent" ? null : outcome.problem;
  return tx.$executeRaw`
    UPDATE invitations
    SET email_status = ${outcome.status}, email_sent_at = CASE WHEN ${outcome.status} = 'sent' THEN now() ELSE NULL END,
        email_problem = ${problem}, email_claimed_until = NULL
    WHERE id = ${id} AND email_status = 'sending' AND token_hash = ${tokenHash}`;
}
