import type { Tx } from "@holdfast/db";

/** The (lowercased) emails of the organisation's members, with their roles. */
export function membershipsListEmails(tx: Tx, orgId: string): Promise<{ email: string; role: string }[]> {
  return tx.$queryRaw<{ email: string; role: string }[]>`
    SELECT lower(u.email) AS email, m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId}`;
}
