import { createHash, randomBytes } from "node:crypto";
import type { Db } from "@holdfast/db";
import type { Role } from "../approvals/judge";
import { verifyPassword } from "./password";

/**
 * Sessions: the browser holds a random 32-byte token in an httpOnly cookie; the database holds only its sha256, with
 * an expiry judged by the database clock. Signing out deletes the row.
 */
export const sessionCookie = "hf_session";
export const sessionDays = 14;

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  memberships: { orgId: string; orgSlug: string; orgName: string; role: Role }[];
}

/** Checks an email and password; on success a new session token (to set as the cookie) and its expiry. */
export async function signIn(db: Db, email: string, password: string): Promise<{ token: string; expiresAt: Date } | null> {
  const users = await db.$queryRaw<{ id: string; passwordHash: string | null }[]>`
    SELECT id, password_hash AS "passwordHash" FROM users WHERE email = ${email.trim().toLowerCase()}`;
  const ok = await verifyPassword(password, users[0]?.passwordHash ?? null);
  if (!ok || !users[0]) return null;
  const token = randomBytes(32).toString("base64url");
  const rows = await db.$queryRaw<{ expiresAt: Date }[]>`
    INSERT INTO sessions (id, user_id, expires_at) VALUES (${hashToken(token)}, ${users[0].id}, now() + make_interval(days => ${sessionDays}))
    RETURNING expires_at AS "expiresAt"`;
  return { token, expiresAt: (rows[0] as { expiresAt: Date }).expiresAt };
}

export async function signOut(db: Db, token: string): Promise<void> {
  await db.$executeRaw`DELETE FROM sessions WHERE id = ${hashToken(token)}`;
}

/** The signed-in user of a session token, with the organisations and roles they hold now; null if none or expired. */
export async function sessionUser(db: Db, token: string | undefined): Promise<SessionUser | null> {
  if (!token || token.length > 200) return null;
  const rows = await db.$queryRaw<{ id: string; email: string; name: string }[]>`
    SELECT u.id, u.email, u.name FROM sessions s JOIN users u ON u.id = s.user_id
    WHERE s.id = ${hashToken(token)} AND s.expires_at > now()`;
  const user = rows[0];
  if (!user) return null;
  const memberships = await db.$queryRaw<SessionUser["memberships"]>`
    SELECT m.org_id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", m.role
    FROM memberships m JOIN organisations o ON o.id = m.org_id
    WHERE m.user_id = ${user.id} ORDER BY o.name`;
  return { ...user, memberships };
}
