import type { Tx } from "@holdfast/db";

export type Consent = "granted" | "unknown" | "withdrawn";

export interface RunContact {
  id: string;
  email: string;
  timeZone: string | null;
  consent: Consent;
}

/** The run's contact as it is now (templates see it as `contact`). */
export async function contactsOfRun(tx: Tx, orgId: string, runId: string): Promise<RunContact | null> {
  const rows = await tx.$queryRaw<RunContact[]>`
    SELECT c.id, c.email, c.time_zone AS "timeZone", c.consent
    FROM runs r JOIN contacts c ON c.id = r.contact_id AND c.org_id = r.org_id
    WHERE r.org_id = ${orgId} AND r.id = ${runId}`;
  return rows[0] ?? null;
}

export interface SendPermission {
  allowed: boolean;
  reason: string | null;
  /** The database instant of the check: a send is ordered before any unsubscribe committed after it. */
  checkedAt: Date;
}

/**
 * Consent at send time, by the database clock: the address must not be on the organisation's suppression list,
 * and a known contact must not have withdrawn consent (nor lack it, when the node requires it). Runs inside the
 * step, immediately before the provider is called.
 */
export async function contactsMaySend(tx: Tx, orgId: string, email: string, requireConsent: boolean): Promise<SendPermission> {
  const rows = await tx.$queryRaw<{ suppressed: string | null; consent: Consent | null; checkedAt: Date }[]>`
    SELECT (SELECT reason FROM suppressions WHERE org_id = ${orgId} AND email = lower(${email})) AS suppressed,
           (SELECT consent FROM contacts WHERE org_id = ${orgId} AND email = lower(${email})) AS consent,
           clock_timestamp() AS "checkedAt"`;
  const row = rows[0] as { suppressed: string | null; consent: Consent | null; checkedAt: Date };
  if (row.suppressed !== null) return { allowed: false, reason: `suppressed: ${row.suppressed}`, checkedAt: row.checkedAt };
  if (row.consent === "withdrawn") return { allowed: false, reason: "consent withdrawn", checkedAt: row.checkedAt };
  if (requireConsent && row.consent !== "granted") return { allowed: false, reason: "no recorded consent", checkedAt: row.checkedAt };
  return { allowed: true, reason: null, checkedAt: row.checkedAt };
}

/** Unsubscribe: consent withdrawn and the address suppressed, in one statement. Returns when it committed. */
export async function contactsUnsubscribe(tx: Tx, orgId: string, email: string, reason = "unsubscribed"): Promise<Date> {
  const rows = await tx.$queryRaw<{ at: Date }[]>`
    WITH c AS (
      UPDATE contacts SET consent = 'withdrawn', consent_changed_at = clock_timestamp(), updated_at = now()
      WHERE org_id = ${orgId} AND email = lower(${email})
    ), s AS (
      INSERT INTO suppressions (org_id, email, reason) VALUES (${orgId}, lower(${email}), ${reason})
      ON CONFLICT (org_id, email) DO NOTHING
    )
    SELECT clock_timestamp() AS at`;
  return (rows[0] as { at: Date }).at;
}
