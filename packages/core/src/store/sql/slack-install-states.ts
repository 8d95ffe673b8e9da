import type { Tx } from "@holdfast/db";

/** A new install state for 10 minutes (database clock); the organisation's states ended a day ago go in the same statement. */
export async function slackInstallStatesInsert(tx: Tx, s: { id: string; orgId: string; userId: string; sessionId: string }): Promise<Date> {
  const rows = await tx.$queryRaw<{ expiresAt: Date }[]>`
    WITH old AS (
      DELETE FROM slack_install_states WHERE org_id = ${s.orgId} AND expires_at < now() - interval '1 day'
    )
    INSERT INTO slack_install_states (id, org_id, user_id, session_id, expires_at)
    VALUES (${s.id}, ${s.orgId}, ${s.userId}, ${s.sessionId}, now() + interval '10 minutes')
    RETURNING expires_at AS "expiresAt"`;
  return (rows[0] as { expiresAt: Date }).expiresAt;
}

export type StateUse = { kind: "ok"; userId: string } | { kind: "unknown" } | { kind: "used" } | { kind: "expired" } | { kind: "other_session" };

/**
 * Uses a state once: marked used only if it is unused, unexpired and started by this session of this organisation.
 * Otherwise says which of those failed (read after the failed update, for the sentence).
 */
export async function slackInstallStatesUse(tx: Tx, s: { id: string; orgId: string; sessionId: string }): Promise<StateUse> {
  const used = await tx.$queryRaw<{ userId: string }[]>`
    UPDATE slack_install_states SET used_at = now()
    WHERE id = ${s.id} AND org_id = ${s.orgId} AND session_id = ${s.sessionId} AND used_at IS NULL AND expires_at > now()
    RETURNING user_id AS "userId"`;
  if (used[0]) return { kind: "ok", userId: used[0].userId };
  const rows = await tx.$queryRaw<{ sessionId: string; used: boolean; expired: boolean }[]>`
    SELECT session_id AS "sessionId", used_at IS NOT NULL AS used, expires_at <= now() AS expired
    FROM slack_install_states WHERE id = ${s.id} AND org_id = ${s.orgId}`;
  const row = rows[0];
  if (!row) return { kind: "unknown" };
  if (row.sessionId !== s.sessionId) return { kind: "other_session" };
  if (row.used) return { kind: "used" };
  return { kind: "expired" };
}
