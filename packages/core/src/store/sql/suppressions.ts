import type { Db, Tx } from "@holdfast/db";

/** The organisation's suppression list (addresses never emailed), newest first (at most 500). */
export function suppressionsList(db: Db | Tx, orgId: string): Promise<{ email: string; reason: string; createdAt: Date }[]> {
  return db.$queryRaw<{ email: string; reason: string; createdAt: Date }[]>`
    SELECT email, reason, created_at AS "createdAt" FROM suppressions WHERE org_id = ${orgId} ORDER BY created_at DESC LIMIT 500`;
}

/** Suppresses the address (already suppressed: kept as it was). */
export function suppressionsInsert(db: Db | Tx, orgId: string, email: string, reason: string): Promise<number> {
  return db.$executeRaw`INSERT INTO suppressions (org_id, email, reason) VALUES (${orgId}, ${email}, ${reason}) ON CONFLICT DO NOTHING`;
}

export function suppressionsDelete(db: Db | Tx, orgId: string, email: string): Promise<number> {
  return db.$executeRaw`DELETE FROM suppressions WHERE org_id = ${orgId} AND email = ${email}`;
}

/**
 * Suppresses the address unless it is suppressed already, as itself or as the hash an erasure left; true when this
 * call added it. Concurrent calls: one adds, the others see the conflict.
 */
export async function suppressionsAddOnce(db: Db | Tx, orgId: string, email: string, reason: string): Promise<boolean> {
  const rows = await (db as Tx).$queryRaw<{ added: number }[]>`
    WITH ins AS (
      INSERT INTO suppressions (org_id, email, reason)
      SELECT ${orgId}, lower(${email}), ${reason}
      WHERE NOT EXISTS (SELECT 1 FROM suppressions WHERE org_id = ${orgId}
                          AND email = 'sha256:' || encode(sha256(convert_to(lower(${email}), 'UTF8')), 'hex'))
      ON CONFLICT DO NOTHING RETURNING 1)
    SELECT count(*)::int AS added FROM ins`;
  return (rows[0]?.added ?? 0) > 0;
}
