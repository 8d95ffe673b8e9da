import { type Db, inTx } from "@holdfast/db";
import { membershipsDeleteByEmail, membershipsUpsert, membershipsUpsertRole, type Role } from "../sql/memberships";
import { usersIdByEmail, usersInsertIfNew, usersSetPassword, usersUpsert } from "../sql/users";
import { hashPassword } from "./password";
import { revokeUserSessions } from "./sessions";

/**
 * Creates (or updates) a user and their membership of one organisation, in one transaction. Setting a password ends
 * every session the user had (a password change must lock out whoever held the old one).
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

/**
 * Adds a person to one organisation from the web (an owner's action): a new user is created with the given name and
 * password; an existing user (of any organisation) keeps their own name and password, untouched, and only gains
 * the membership. An owner can never take over another organisation's user this way.
 */
export async function addMember(
  db: Db,
  m: { orgId: string; email: string; name: string; password: string | null; role: Role },
): Promise<{ userId: string; created: boolean }> {
  const hash = m.password === null ? null : await hashPassword(m.password);
  return inTx(db, async (tx) => {
    const email = m.email.trim().toLowerCase();
    const created = await usersInsertIfNew(tx, email, m.name, hash);
    const userId = created ?? (await usersIdByEmail(tx, email));
    if (!userId) throw new Error(`user ${email} not found`);
    await membershipsUpsertRole(tx, m.orgId, userId, m.role);
    return { userId, created: created !== undefined };
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
