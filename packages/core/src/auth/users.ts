import { type Db, inTx } from "@holdfast/db";
import type { Role } from "../approvals/judge";
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
    const users = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO users (email, name, password_hash) VALUES (${m.email.trim().toLowerCase()}, ${m.name}, ${hash})
      ON CONFLICT (email) DO UPDATE SET name = EXCLUDED.name, password_hash = COALESCE(EXCLUDED.password_hash, users.password_hash)
      RETURNING id`;
    const userId = (users[0] as { id: string }).id;
    if (hash !== null) await revokeUserSessions(tx, userId);
    await tx.$executeRaw`
      INSERT INTO memberships (org_id, user_id, role, slack_user_id) VALUES (${m.orgId}, ${userId}, ${m.role}, ${m.slackUserId ?? null})
      ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role, slack_user_id = COALESCE(EXCLUDED.slack_user_id, memberships.slack_user_id)`;
    return userId;
  });
}

/** Takes a user's access to an organisation away; decisions they try from now on are refused. */
export async function removeMember(db: Db, orgId: string, email: string): Promise<boolean> {
  const n = await db.$executeRaw`
    DELETE FROM memberships WHERE org_id = ${orgId} AND user_id = (SELECT id FROM users WHERE email = ${email.trim().toLowerCase()})`;
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
    const created = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO users (email, name, password_hash) VALUES (${email}, ${m.name}, ${hash})
      ON CONFLICT (email) DO NOTHING RETURNING id`;
    const userId = created[0]?.id ?? (await tx.$queryRaw<{ id: string }[]>`SELECT id FROM users WHERE email = ${email}`)[0]?.id;
    if (!userId) throw new Error(`user ${email} not found`);
    await tx.$executeRaw`
      INSERT INTO memberships (org_id, user_id, role) VALUES (${m.orgId}, ${userId}, ${m.role})
      ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role`;
    return { userId, created: created.length > 0 };
  });
}

/** Sets a user's password and ends every session they have, in one transaction; null when no such user exists. */
export async function setUserPassword(db: Db, email: string, password: string): Promise<{ userId: string; sessionsRevoked: number } | null> {
  const hash = await hashPassword(password);
  return inTx(db, async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      UPDATE users SET password_hash = ${hash} WHERE email = ${email.trim().toLowerCase()} RETURNING id`;
    const userId = rows[0]?.id;
    if (!userId) return null;
    return { userId, sessionsRevoked: await revokeUserSessions(tx, userId) };
  });
}
