import { createHash, randomBytes } from "node:crypto";
import { type Db, inTx } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import {
  type InvitationRow,
  invitationsAcceptIfUsable,
  invitationsDeclineIfUsable,
  invitationsFindByToken,
  invitationsListOpen,
  invitationsOrgOfToken,
  invitationsRevokeIfOpen,
  invitationsUpsertOpen,
  type OpenInvitation,
} from "../../store/sql/invitations";
import { membershipsHasEmail, membershipsInsertIfNew, membershipsRoleOf, type Role } from "../../store/sql/memberships";
import { usersIdByEmail, usersInsertIfNew } from "../../store/sql/users";
import { hashPassword } from "./password";
import { type SignInOptions, startSession } from "./sessions";

/**
 * Invitations: how a person joins an organisation from the web. An owner invites an address with a role and gets a
 * link, once; the person opens it and accepts (signed in as that address, or by making the account the link is for).
 * The owner's answer is the same whether or not the address has an account anywhere, and nobody is a member before
 * they accept. The link carries 32 random bytes; the database keeps their sha256, judges expiry by its own clock and
 * lets a link be used once (store/sql/invitations.ts). The operator's CLI still adds members directly (users.ts).
 *
 * The person opening a link is not a member yet, so the web's session scope cannot see the invitation: the link's
 * hash names its organisation (holdfast_invitation_org, SECURITY DEFINER) and the work runs in that organisation's
 * scope through `OrgScope` (the web's withScope), as a trigger URL's organisation does.
 */
export type OrgScope = <T>(orgId: string, work: () => Promise<T>) => Promise<T>;

const unscoped: OrgScope = (_orgId, work) => work();

/** The path of an invitation's link. */
export const invitationPath = (token: string) => `/invite/${token}`;

/** A link token as issued: 32 bytes, base64url. Anything else is not looked up. */
const tokenShape = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** A new link token (32 random bytes) and the hash the database keeps of it. */
export function newInvitationToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, hash: hashOf(token) };
}

/** The shortest password an account made from an invitation may have (the same rule as everywhere else). */
export const minPasswordLength = 10;

export class MemberExistsError extends HoldfastError {
  constructor(email: string) {
    super("member_exists", `${email} is already a member of this organisation: change their role in the list instead`);
  }
}

export class InvalidAccountError extends HoldfastError {
  constructor(message: string) {
    super("invalid_account", message);
  }
}

/** The address as typed and lowercased; refused when it is already a member's. */
async function invitedAddress(db: Db, orgId: string, typed: string): Promise<{ email: string; emailTyped: string }> {
  const emailTyped = typed.trim();
  const email = emailTyped.toLowerCase();
  // Only this organisation's own members are looked at (the owner sees them in the list anyway).
  if (await membershipsHasEmail(db, orgId, email)) throw new MemberExistsError(emailTyped);
  return { email, emailTyped };
}

/**
 * Invites an address to the organisation with a role, or renews its open invitation (a new link, 7 more days; the
 * earlier link stops working), for a deployment without a system mailbox: the owner is given the link to pass on.
 * The answer never depends on whether the address has an account; whoever holds the link can use it (the limit of
 * this mode: the owner holds it too).
 */
export async function inviteMember(
  db: Db,
  i: { orgId: string; email: string; role: Role; invitedBy: string },
): Promise<{ invitationId: string; token: string; expiresAt: Date }> {
  const address = await invitedAddress(db, i.orgId, i.email);
  const { token, hash } = newInvitationToken();
  const { id, expiresAt } = await invitationsUpsertOpen(db, { orgId: i.orgId, ...address, role: i.role, invitedBy: i.invitedBy, delivery: { kind: "link", tokenHash: hash } });
  return { invitationId: id, token, expiresAt };
}

/**
 * Invites an address (or renews its open invitation: Send again) when the deployment has a system mailbox: the row
 * owes an email and holds no link; the sweeper makes the link when it claims the row and emails it to the address
 * (invitation-mail.ts). Nobody else ever sees the link, the owner included, so what it shows (whether the address
 * has an account) and what it allows (making that account) are for the holder of the mailbox only. An earlier link
 * stops working at once. `linkBase`: the web's public address, used when the sweeper has no HOLDFAST_APP_URL.
 */
export async function inviteMemberByEmail(
  db: Db,
  i: { orgId: string; email: string; role: Role; invitedBy: string; linkBase: string },
): Promise<{ invitationId: string; sentTo: string; expiresAt: Date }> {
  const address = await invitedAddress(db, i.orgId, i.email);
  const { id, expiresAt } = await invitationsUpsertOpen(db, { orgId: i.orgId, ...address, role: i.role, invitedBy: i.invitedBy, delivery: { kind: "email", linkBase: i.linkBase } });
  return { invitationId: id, sentTo: address.emailTyped, expiresAt };
}

export function listOpenInvitations(db: Db, orgId: string): Promise<OpenInvitation[]> {
  return invitationsListOpen(db, orgId);
}

export function revokeInvitation(db: Db, orgId: string, invitationId: string): Promise<boolean> {
  return invitationsRevokeIfOpen(db, orgId, invitationId);
}

/** Why a link cannot be used (now, by this visitor). */
export type InvitationRefusal = "unknown" | "expired" | "revoked" | "declined" | "used" | "other_address" | "account_exists";

const refusals: Record<InvitationRefusal, string> = {
  unknown: "This invitation link is not valid: it may be incomplete, or a newer invitation replaced it. Ask the owner for a new one.",
  expired: "This invitation has expired: ask the owner for a new one.",
  revoked: "This invitation was withdrawn: ask the owner for a new one if you still need access.",
  declined: "This invitation was declined: ask the owner for a new one if you change your mind.",
  used: "This invitation has already been used.",
  other_address: "This invitation is for another email address than the one you are signed in with.",
  account_exists: "An account with this email address already exists: sign in to accept the invitation.",
};

/** A refusal in a sentence for the person holding the link. */
export const invitationRefusalMessage = (reason: InvitationRefusal): string => refusals[reason];

/** What an invitation offers, as its link's page shows it. */
export interface InvitationOffer {
  orgName: string;
  orgSlug: string;
  role: Role;
  /** The invited address (lowercased): for the page to compare and mask, never to show in full to another user. */
  email: string;
  expiresAt: Date;
}

export type InvitationOutcome =
  | { kind: "accepted"; orgName: string; orgSlug: string; acceptedAt: Date; role: Role | null; joined: boolean; again: boolean }
  | { kind: "refused"; reason: InvitationRefusal; message: string };

/**
 * An open invitation as its visitor may use it: `invited` (signed in as its address: accept or decline),
 * `other_address` (signed in as someone else: sign out first), `signed_out` (sign in when the address has an account,
 * `accountExists`; otherwise make the account).
 */
export type InvitationLookup =
  | { kind: "open"; offer: InvitationOffer; visitor: "invited" | "other_address" | "signed_out"; accountExists: boolean | null }
  | Extract<InvitationOutcome, { kind: "accepted" }>
  | Extract<InvitationOutcome, { kind: "refused" }>;

const refused = (reason: InvitationRefusal) => ({ kind: "refused", reason, message: refusals[reason] }) as const;

/** The organisation of a link's token, or undefined when the token is malformed or names no invitation. */
async function orgOfToken(db: Db, token: string): Promise<{ orgId: string; hash: string } | undefined> {
  if (!tokenShape.test(token)) return undefined;
  const hash = hashOf(token);
  const orgId = await invitationsOrgOfToken(db, hash);
  return orgId ? { orgId, hash } : undefined;
}

/** What an invitation is now, as its visitor (null: signed out) may know it. */
async function readBack(db: Db, row: InvitationRow, visitor: { id: string; email: string } | null): Promise<InvitationLookup> {
  switch (row.state) {
    case "accepted":
      if (visitor !== null && row.acceptedBy === visitor.id) {
        // Accepting again, or opening the link after accepting: what happened then, and the role held now.
        const role = (await membershipsRoleOf(db, row.orgId, visitor.id)) ?? null;
        return { kind: "accepted", orgName: row.orgName, orgSlug: row.orgSlug, acceptedAt: row.acceptedAt ?? row.expiresAt, role, joined: false, again: true };
      }
      return refused("used");
    case "expired":
    case "revoked":
    case "declined":
      return refused(row.state);
    case "open": {
      const offer = { orgName: row.orgName, orgSlug: row.orgSlug, role: row.role, email: row.email, expiresAt: row.expiresAt };
      if (visitor) return { kind: "open", offer, visitor: visitor.email.toLowerCase() === row.email ? "invited" : "other_address", accountExists: null };
      // Told to the link's holder only, to choose between signing in and making the account; the owner's own answer
      // never says. An owner who opens the link they were given, signed out, learns it too: closing that needs the
      // link to reach the person by email without passing through the owner.
      return { kind: "open", offer, visitor: "signed_out", accountExists: (await usersIdByEmail(db, row.email)) !== undefined };
    }
  }
}

/** The answer to an accept (or decline) that wrote nothing: an invitation still open was not this visitor's to use. */
function settled(seen: InvitationLookup): InvitationOutcome {
  if (seen.kind !== "open") return seen;
  if (seen.visitor === "signed_out") return refused("account_exists");
  // "invited" here would mean the row changed between the two statements: say nothing more than that it failed.
  return refused(seen.visitor === "other_address" ? "other_address" : "unknown");
}

/**
 * What a link offers to its visitor: the organisation and role while it can be used, or what became of it. Whether an
 * account exists for the invited address is told to the link's holder only (it decides between signing in and making
 * the account); the owner's own answer never says.
 */
export async function viewInvitation(db: Db, token: string, visitor: { id: string; email: string } | null, scope: OrgScope = unscoped): Promise<InvitationLookup> {
  const found = await orgOfToken(db, token);
  if (!found) return refused("unknown");
  return scope(found.orgId, async () => {
    const row = await invitationsFindByToken(db, found.orgId, found.hash);
    return row ? readBack(db, row, visitor) : refused("unknown");
  });
}

/**
 * Accepts the invitation as the signed-in user: in one transaction the link is used (only if it is open, unexpired
 * and for this user's address) and the membership made (an existing member keeps their role). Accepting again reads
 * back the first acceptance and changes nothing.
 */
export async function acceptInvitation(db: Db, token: string, user: { id: string; email: string }, scope: OrgScope = unscoped): Promise<InvitationOutcome> {
  const found = await orgOfToken(db, token);
  if (!found) return refused("unknown");
  return scope(found.orgId, async () => {
    const done = await inTx(db, async (tx) => {
      const used = await invitationsAcceptIfUsable(tx, found.orgId, found.hash, user.id);
      if (!used) return undefined;
      const joined = await membershipsInsertIfNew(tx, found.orgId, user.id, used.role);
      return { joined, acceptedAt: used.acceptedAt, role: (await membershipsRoleOf(tx, found.orgId, user.id)) ?? null };
    });
    const row = await invitationsFindByToken(db, found.orgId, found.hash);
    if (!row) return refused("unknown");
    if (done) return { kind: "accepted", orgName: row.orgName, orgSlug: row.orgSlug, ...done, again: false };
    return settled(await readBack(db, row, user));
  });
}

/** Declines the invitation as the signed-in user it is for; the link then says it was declined. */
export async function declineInvitation(db: Db, token: string, user: { id: string; email: string }, scope: OrgScope = unscoped): Promise<InvitationOutcome> {
  const found = await orgOfToken(db, token);
  if (!found) return refused("unknown");
  return scope(found.orgId, async () => {
    await invitationsDeclineIfUsable(db, found.orgId, found.hash, user.id);
    const row = await invitationsFindByToken(db, found.orgId, found.hash);
    return row ? settled(await readBack(db, row, user)) : refused("unknown");
  });
}

/** Thrown inside the transaction to undo it; answered as a refusal outside. */
class Undo extends Error {
  constructor(readonly reason: InvitationRefusal | null) {
    super("undo");
  }
}

/**
 * Accepts an invitation whose address has no account yet: the account (with the name and password the person chose),
 * the link's use, the membership and a session, all in one transaction. An address that has an account by then is
 * refused (the holder of a link never sets the password of an existing account): they sign in instead.
 */
export async function acceptInvitationAsNewUser(
  db: Db,
  token: string,
  account: { name: string; password: string },
  options: SignInOptions = {},
  scope: OrgScope = unscoped,
): Promise<{ outcome: InvitationOutcome; session: { token: string; expiresAt: Date } | null }> {
  const name = account.name.trim();
  if (name.length === 0 || name.length > 200) throw new InvalidAccountError("Enter your name (at most 200 characters).");
  if (account.password.length < minPasswordLength || account.password.length > 1_000) {
    throw new InvalidAccountError(`Choose a password of at least ${minPasswordLength} characters.`);
  }
  const found = await orgOfToken(db, token);
  if (!found) return { outcome: refused("unknown"), session: null };
  const passwordHash = await hashPassword(account.password);
  return scope(found.orgId, async () => {
    try {
      return await inTx(db, async (tx) => {
        const row = await invitationsFindByToken(tx, found.orgId, found.hash);
        if (row?.state !== "open") throw new Undo(null);
        const userId = await usersInsertIfNew(tx, row.email, name, passwordHash);
        if (!userId) throw new Undo("account_exists");
        const used = await invitationsAcceptIfUsable(tx, found.orgId, found.hash, userId);
        if (!used) throw new Undo(null);
        await membershipsInsertIfNew(tx, found.orgId, userId, used.role);
        const session = await startSession(tx, userId, options);
        const outcome: InvitationOutcome = { kind: "accepted", orgName: row.orgName, orgSlug: row.orgSlug, acceptedAt: used.acceptedAt, role: used.role, joined: true, again: false };
        return { outcome, session };
      });
    } catch (error) {
      if (!(error instanceof Undo)) throw error;
      if (error.reason) return { outcome: refused(error.reason), session: null };
      // The link changed under us (used, revoked, expired): say what it is now, as to someone signed out.
      const row = await invitationsFindByToken(db, found.orgId, found.hash);
      return { outcome: row ? settled(await readBack(db, row, null)) : refused("unknown"), session: null };
    }
  });
}
