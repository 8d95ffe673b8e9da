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
