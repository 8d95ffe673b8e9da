import { type Db, inTx } from "@holdfast/db";
import { HoldfastError, NotFoundError } from "../../base/errors";
import {
  membershipsDeleteByEmail,
  membershipsLockOwners,
  membershipsRoleOf,
  membershipsSetRoleKeepingAnOwner,
  membershipsUpsert,
  type Role,
} from "../../store/sql/memberships";
import { usersSetPassword, usersUpsert } from "../../store/sql/users";
import { hashPassword } from "./password";
import { revokeUserSessions } from "./sessions";

/**
 * Creates (or updates) a user and their membership of one organisation, in one transaction: the operator's way (CLI
 * `users add`, the seed), which has the whole database anyway. The web never adds a member directly: an owner
 * invites and the person accepts (invitations.ts). Setting a password ends every session the user had (a password
 * change must lock out whoever held the old one).
 */
export async function upsertMember(
  db: Db,
  m: { orgId: string; email: string; name: string; password: string | null; role: Role; slackUserId?: string | null },
): Promise<string> {
  const hash = m.password === null ? null : await hashPassword(m.password);
  return inTx(db, async (tx) => {
    const userId = await usersUpsert(tx, m.email.trim().toLowerCase(), m.name, hash);
    if (hash !== null) await revokeUserSessions(tx, userId);
    await membershipsUpsert(tx, { orgId: m.orgId, userId, role: m.role, slackUserId: m.slackUserId ?? null });
    return userId;
  });
}

/** Takes a user's access to an organisation away; decisions they try from now on are refused. */
export async function removeMember(db: Db, orgId: string, email: string): Promise<boolean> {
  const n = await membershipsDeleteByEmail(db, orgId, email.trim().toLowerCase());
  return n > 0;
}

/** The change would leave the organisation without an owner. */
export class LastOwnerError extends HoldfastError {
  constructor() {
    super("last_owner", "the organisation needs at least one owner: make someone else an owner first");
  }
}

/**
 * Gives a member another role. An organisation always keeps an owner: the last owner cannot be given another role
 * (LastOwnerError), and two owners demoting each other at the same moment leave one owner (the owner rows are locked,
 * so the second change sees the first). NotFoundError when the user is not a member.
 */
export async function setMemberRole(db: Db, orgId: string, userId: string, role: Role): Promise<void> {
  await inTx(db, async (tx) => {
    await membershipsLockOwners(tx, orgId);
    if ((await membershipsSetRoleKeepingAnOwner(tx, orgId, userId, role)) > 0) return;
    if ((await membershipsRoleOf(tx, orgId, userId)) === undefined) throw new NotFoundError("user_not_found", "member");
    throw new LastOwnerError();
  });
}

/** Sets a user's password and ends every session they have, in one transaction; null when no such user exists. */
export async function setUserPassword(db: Db, email: string, password: string): Promise<{ userId: string; sessionsRevoked: number } | null> {
  const hash = await hashPassword(password);
  return inTx(db, async (tx) => {
    const userId = await usersSetPassword(tx, email.trim().toLowerCase(), hash);
    if (!userId) return null;
    return { userId, sessionsRevoked: await revokeUserSessions(tx, userId) };
  });
}
