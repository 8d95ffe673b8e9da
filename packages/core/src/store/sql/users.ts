import type { Db, Tx } from "@holdfast/db";

/** People who sign in; emails are stored lowercased (callers lowercase them). */

/** Creates the user, or updates their name and (when a hash is given) password; their id. */
export async function usersUpsert(tx: Tx, email: string, name: string, passwordHash: string | null): Promise<string> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO users (email, name, password_hash) VALUES (${email}, ${name}, ${passwordHash})
    ON CONFLICT (email) DO UPDATE SET name = EXCLUDED.name, password_hash = COALESCE(EXCLUDED.password_hash, users.password_hash)
    RETURNING id`;
  return (rows[0] as { id: string }).id;
}

/** Creates the user unless the email exists (an existing user keeps their name and password); the new id, else undefined. */
export async function usersInsertIfNew(tx: Tx, email: string, name: string, passwordHash: string | null): Promise<string | undefined> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO users (email, name, password_hash) VALUES (${email}, ${name}, ${passwordHash})
    ON CONFLICT (email) DO NOTHING RETURNING id`;
  return rows[0]?.id;
}

export async function usersIdByEmail(db: Db | Tx, email: string): Promise<string | undefined> {
  const rows = await db.$queryRaw<{ id: string }[]>`SELECT id FROM users WHERE email = ${email}`;
  return rows[0]?.id;
}

/** The user's id and password hash (null: no password set), for signing in. */
export async function usersCredentials(db: Db | Tx, email: string): Promise<{ id: string; passwordHash: string | null } | undefined> {
  const rows = await db.$queryRaw<{ id: string; passwordHash: string | null }[]>`
    SELECT id, password_hash AS "passwordHash" FROM users WHERE email = ${email}`;
  return rows[0];
}

/** Sets the password hash; the user's id, or undefined when no user has the email. */
export async function usersSetPassword(tx: Tx, email: string, passwordHash: string): Promise<string | undefined> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    UPDATE users SET password_hash = ${passwordHash} WHERE email = ${email} RETURNING id`;
  return rows[0]?.id;
}

/** The user's password hash (undefined: no such user; null: no password set). */
export async function usersPasswordHash(db: Db | Tx, email: string): Promise<string | null | undefined> {
  const rows = await db.$queryRaw<{ hash: string | null }[]>`SELECT password_hash AS hash FROM users WHERE email = ${email}`;
  return rows[0]?.hash;
}
