import type { Tx } from "@holdfast/db";

/**
 * connection_notices: one row per break of a connection, written by the trigger on connections.status (see the
 * migration 20261201102000_settings_zones_notices). The banner reads the open ones; the sweeper sends each one's
 * email to the organisation's owners once.
 */

export interface OpenNotice {
  id: string;
  orgId: string;
  orgSlug: string;
  orgName: string;
  connectionId: string;
  connectionName: string;
  reason: string | null;
  brokenAt: Date;
  parkedRuns: number;
}

/** The open notices (connection still broken) of these organisations, with how many runs are parked on each. */
export function noticesOpenForOrgs(tx: Tx, orgIds: string[]): Promise<OpenNotice[]> {
  return tx.$queryRaw<OpenNotice[]>`
    SELECT n.id, n.org_id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", n.connection_id AS "connectionId",
           c.name AS "connectionName", COALESCE(c.status_reason, n.reason) AS reason, n.created_at AS "brokenAt",
           (SELECT count(DISTINCT s.run_id)::int FROM steps s
             WHERE s.org_id = n.org_id AND s.status = 'parked' AND s.error->>'connectionId' = n.connection_id) AS "parkedRuns"
    FROM connection_notices n
    JOIN connections c ON c.org_id = n.org_id AND c.id = n.connection_id
    JOIN organisations o ON o.id = n.org_id
    WHERE n.org_id = ANY(${orgIds}::text[]) AND n.resolved_at IS NULL AND c.status = 'needs_reconnect'
    ORDER BY n.created_at
    LIMIT 50`;
}

export interface ClaimedNotice {
  id: string;
  orgId: string;
  orgName: string;
  connectionName: string;
  reason: string | null;
  breakNo: number;
  attempts: number;
  owners: string[];
  parkedRuns: number;
}

/**
 * Takes up to `limit` notices whose email is owed (pending, or claimed by a sender whose lease lapsed) for
 * `leaseSeconds`, SKIP LOCKED so two senders never take the same one. A notice resolved before it was sent is
 * still sent: the owners should know the connection broke and what was parked.
 */
export function noticesClaimOwedEmail(tx: Tx, limit: number, leaseSeconds: number, maxAttempts: number): Promise<ClaimedNotice[]> {
  return tx.$queryRaw<ClaimedNotice[]>`
    WITH picked AS (
      SELECT id FROM connection_notices
      WHERE (email_status = 'pending' OR (email_status = 'sending' AND email_claimed_until < now()))
        AND email_attempts < ${maxAttempts}
      ORDER BY created_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE connection_notices n SET email_status = 'sending', email_attempts = email_attempts + 1,
                                      email_claimed_until = now() + make_interval(secs => ${leaseSeconds})
      FROM picked WHERE n.id = picked.id
      RETURNING n.id, n.org_id, n.connection_id, n.reason, n.break_no, n.email_attempts
    )
    SELECT cl.id, cl.org_id AS "orgId", o.name AS "orgName", c.name AS "connectionName",
           COALESCE(cl.reason, c.status_reason) AS reason, cl.break_no AS "breakNo", cl.email_attempts AS attempts,
           ARRAY(SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
                 WHERE m.org_id = cl.org_id AND m.role = 'owner' ORDER BY u.email) AS owners,
           (SELECT count(DISTINCT s.run_id)::int FROM steps s
             WHERE s.org_id = cl.org_id AND s.status = 'parked' AND s.error->>'connectionId' = cl.connection_id) AS "parkedRuns"
    FROM claimed cl JOIN connections c ON c.id = cl.connection_id JOIN organisations o ON o.id = cl.org_id`;
}

/** The email went (or was not sent, with why): only by the claim that took it (its attempt number). */
export function noticesSettleEmail(
  tx: Tx,
  id: string,
  attempt: number,
  outcome: { status: "sent"; to: string[] } | { status: "skipped" | "failed" | "pending"; error: string },
): Promise<number> {
  const to = outcome.status === "sent" ? outcome.to : null;
  const error = outcome.status === "sent" ? null : outcome.error.slice(0, 500);
  return tx.$executeRaw`
    UPDATE connection_notices
    SET email_status = ${outcome.status}, email_sent_at = CASE WHEN ${outcome.status} = 'sent' THEN now() ELSE NULL END,
        email_to = ${to}::text[], email_error = ${error}, email_claimed_until = NULL
    WHERE id = ${id} AND email_status = 'sending' AND email_attempts = ${attempt}::int`;
}
