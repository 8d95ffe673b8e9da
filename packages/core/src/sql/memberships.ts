import type { Tx } from "@holdfast/db";

/** The (lowercased) emails of the organisation's members, with their roles. */
export function membershipsListEmails(tx: Tx, orgId: string): Promise<{ email: string; role: string }[]> {
  return tx.$queryRaw<{ email: string; role: string }[]>`
    SELECT lower(u.email) AS email, m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId}`;
}

/** Members with their emails and Slack links, for linking them to a workspace's users. */
export function membershipsSlackLinks(tx: Tx, orgId: string): Promise<{ userId: string; email: string; slackUserId: string | null }[]> {
  return tx.$queryRaw<{ userId: string; email: string; slackUserId: string | null }[]>`
    SELECT m.user_id AS "userId", lower(u.email) AS email, m.slack_user_id AS "slackUserId"
    FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId} ORDER BY u.email`;
}

/**
 * Links a member to a Slack user found by their email, only while they have no link (a link set by hand stays) and
 * no other member of the organisation has that Slack user. False when either holds.
 */
export async function membershipsLinkSlackIfUnset(tx: Tx, orgId: string, userId: string, slackUserId: string): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE memberships SET slack_user_id = ${slackUserId}
    WHERE org_id = ${orgId} AND user_id = ${userId} AND slack_user_id IS NULL
      AND NOT EXISTS (SELECT 1 FROM memberships o WHERE o.org_id = ${orgId} AND o.slack_user_id = ${slackUserId})`;
  return n > 0;
}
