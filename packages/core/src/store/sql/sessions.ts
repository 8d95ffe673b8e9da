import type { Db, Tx } from "@holdfast/db";

/**
 * The sessions table. A session is valid exactly while `expires_at > now() AND idle_expires_at > now()` (the
 * absolute lifetime and the idle timeout), always by the database clock; the row-level-security function uses the
 * same predicate, so keep the two in step.
 */

export interface SessionLifetime {
  /** Absolute lifetime from sign-in. */
  days: number;
  /** Idle timeout: a session not used for this long ends, whatever its absolute lifetime. */
  idleMinutes: number;
}

export async function sessionsInsert(tx: Tx, id: string, userId: string, life: SessionLifetime): Promise<{ expiresAt: Date }> {
  const rows = await tx.$queryRaw<{ expiresAt: Date }[]>`
    INSERT INTO sessions (id, user_id, expires_at, idle_expires_at)
    VALUES (${id}, ${userId}, now() + make_interval(days => ${life.days}),
            least(now() + make_interval(days => ${life.days}), now() + make_interval(mins => ${life.idleMinutes})))
    RETURNING expires_at AS "expiresAt"`;
  return rows[0] as { expiresAt: Date };
}

/**
 * The user of a valid session, pushing its idle expiry forward in the same statement. The push is written only when
 * it would move the expiry by more than a minute, so a busy session costs one write a minute, not one per request.
 */
export function sessionsFindValidAndTouch(db: Db | Tx, id: string, idleMinutes: number): Promise<{ id: string; email: string; name: string }[]> {
  return db.$queryRaw<{ id: string; email: string; name: string }[]>`
    WITH s AS (
      SELECT id, user_id, least(expires_at, now() + make_interval(mins => ${idleMinutes})) AS pushed, idle_expires_at
      FROM sessions
      WHERE id = ${id} AND expires_at > now() AND idle_expires_at > now()
    ), touched AS (
      UPDATE sessions x SET idle_expires_at = s.pushed
      FROM s WHERE x.id = s.id AND s.idle_expires_at < s.pushed - interval '1 minute'
      RETURNING x.id
    )
    SELECT u.id, u.email, u.name FROM s JOIN users u ON u.id = s.user_id`;
}

export function sessionsDelete(db: Db | Tx, id: string): Promise<number> {
  return db.$executeRaw`DELETE FROM sessions WHERE id = ${id}`;
}

/** Every session of one user (a password change, a removed account): they sign in again. */
export function sessionsDeleteForUser(db: Db | Tx, userId: string): Promise<number> {
  return db.$executeRaw`DELETE FROM sessions WHERE user_id = ${userId}`;
}

/** Sessions past either expiry are dead rows nobody can use; delete them in bounded batches. */
export function sessionsPurgeExpired(tx: Tx, limit: number): Promise<number> {
  return tx.$executeRaw`
    DELETE FROM sessions WHERE id IN (
      SELECT id FROM sessions WHERE expires_at <= now() OR idle_expires_at <= now() LIMIT ${limit})`;
}
