import { createHash, randomBytes } from "node:crypto";
import { type Db, inTx, type Tx } from "@holdfast/db";
import { membershipsOfUser, type Role } from "../../store/sql/memberships";
import { type SessionLifetime, sessionsDelete, sessionsDeleteForUser, sessionsFindValidAndTouch, sessionsInsert } from "../../store/sql/sessions";
import { usersCredentials } from "../../store/sql/users";
import { verifyPassword } from "./password";

/**
 * Sessions: the browser holds a random 32-byte token in an httpOnly cookie; the database holds only its sha256.
 * A session ends at the first of its absolute expiry (`expires_at`, SESSION_DAYS after sign-in) and its idle expiry
 * (`idle_expires_at`, pushed forward on use by SESSION_IDLE_MINUTES), both judged by the database clock. Signing in
 * always issues a new token (the request's previous session is deleted); a password change deletes all of a user's
 * sessions; the sweeper purges expired rows.
 */
export const sessionCookie = "hf_session";
export const sessionDays = 14;
export const sessionIdleMinutes = 720;

const defaults: SessionLifetime = { days: sessionDays, idleMinutes: sessionIdleMinutes };

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** A session's id from its cookie token (the web's database scope names the session by it). */
export const sessionIdOf = hashToken;

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  memberships: { orgId: string; orgSlug: string; orgName: string; role: Role }[];
}

export interface SignInOptions extends Partial<SessionLifetime> {
  /** The session token the request already carried: it is deleted, so a sign-in never keeps an old token alive. */
  previousToken?: string | undefined;
}

/** Checks an email and password; on success a new session token (to set as the cookie) and its absolute expiry. */
export async function signIn(db: Db, email: string, password: string, options: SignInOptions = {}): Promise<{ token: string; expiresAt: Date } | null> {
  const user = await usersCredentials(db, email.trim().toLowerCase());
  const ok = await verifyPassword(password, user?.passwordHash ?? null);
  if (!ok || !user) return null;
  return inTx(db, (tx) => startSession(tx, user.id, options));
}

/**
 * A new session for a user whose identity the caller has established (a password just checked, an account just made
 * from an invitation), in the caller's transaction: its token (to set as the cookie) and absolute expiry.
 */
export async function startSession(tx: Tx, userId: string, options: SignInOptions = {}): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const life = { days: options.days ?? defaults.days, idleMinutes: options.idleMinutes ?? defaults.idleMinutes };
  // Rotation: a token planted before sign-in (session fixation) or left from an earlier sign-in dies here.
  if (options.previousToken && options.previousToken.length <= 200) await sessionsDelete(tx, hashToken(options.previousToken));
  const { expiresAt } = await sessionsInsert(tx, hashToken(token), userId, life);
  return { token, expiresAt };
}

export async function signOut(db: Db, token: string): Promise<void> {
  await sessionsDelete(db, hashToken(token));
}

/** Ends every session of a user (after a password change): each of their browsers must sign in again. */
export function revokeUserSessions(db: Db | Tx, userId: string): Promise<number> {
  return sessionsDeleteForUser(db, userId);
}

/**
 * The signed-in user of a session token, with the organisations and roles they hold now; null if none, expired or
 * idle too long. Using a session pushes its idle expiry forward (at most one write a minute).
 */
export async function sessionUser(db: Db, token: string | undefined, options: { idleMinutes?: number } = {}): Promise<SessionUser | null> {
  if (!token || token.length > 200) return null;
  const rows = await sessionsFindValidAndTouch(db, hashToken(token), options.idleMinutes ?? defaults.idleMinutes);
  const user = rows[0];
  if (!user) return null;
  const memberships = await membershipsOfUser(db, user.id);
  return { ...user, memberships };
}
