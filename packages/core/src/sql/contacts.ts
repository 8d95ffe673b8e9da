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
    SELECT (SELECT reason FROM suppressions
            WHERE org_id = ${orgId}
              AND email IN (lower(${email}), 'sha256:' || encode(sha256(convert_to(lower(${email}), 'UTF8')), 'hex'))
            LIMIT 1) AS suppressed,
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

/**
 * The contact's data removed from everything stored about its runs, in one transaction: run inputs, step outputs
 * and errors, effect results and errors, timeline data (an `contact.erased` row remains), the contact row itself;
 * its suppression entry becomes a hash of the address. Runs keep their ids, steps and statuses for the audit trail.
 */
export async function contactsEraseData(tx: Tx, orgId: string, email: string, by: string): Promise<{ found: boolean; scrubbed: number }> {
  const contact = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM contacts WHERE org_id = ${orgId} AND email = lower(${email}) FOR UPDATE`;
  const hashed = await tx.$queryRaw<{ h: string }[]>`SELECT 'sha256:' || encode(sha256(convert_to(lower(${email}), 'UTF8')), 'hex') AS h`;
  const hash = (hashed[0] as { h: string }).h;
  await tx.$executeRaw`
    INSERT INTO suppressions (org_id, email, reason)
    SELECT org_id, ${hash}, reason FROM suppressions WHERE org_id = ${orgId} AND email = lower(${email})
    ON CONFLICT (org_id, email) DO NOTHING`;
  await tx.$executeRaw`DELETE FROM suppressions WHERE org_id = ${orgId} AND email = lower(${email})`;
  const id = contact[0]?.id;
  if (!id) return { found: false, scrubbed: 0 };
  const erased = JSON.stringify({ erased: true });
  const runs = await tx.$queryRaw<{ id: string }[]>`
    UPDATE runs SET input = ${erased}::jsonb, error = CASE WHEN error IS NULL THEN NULL ELSE ${erased}::jsonb END, updated_at = now()
    WHERE org_id = ${orgId} AND contact_id = ${id}
    RETURNING id`;
  const runIds = runs.map((r) => r.id);
  await tx.$executeRaw`
    UPDATE steps SET output = CASE WHEN output IS NULL THEN NULL ELSE ${erased}::jsonb END,
                     error = CASE WHEN error IS NULL THEN NULL ELSE ${erased}::jsonb END
    WHERE org_id = ${orgId} AND run_id = ANY(${runIds}::text[])`;
  await tx.$executeRaw`
    UPDATE effects SET result = CASE WHEN result IS NULL THEN NULL ELSE ${erased}::jsonb END,
                       error = CASE WHEN error IS NULL THEN NULL ELSE ${erased}::jsonb END
    WHERE org_id = ${orgId} AND run_id = ANY(${runIds}::text[])`;
  await tx.$executeRaw`
    UPDATE run_events SET data = NULL WHERE org_id = ${orgId} AND run_id = ANY(${runIds}::text[]) AND data IS NOT NULL`;
  await tx.$executeRaw`
    INSERT INTO run_events (org_id, run_id, type, worker)
    SELECT ${orgId}, id, 'contact.erased', ${by} FROM unnest(${runIds}::text[]) AS id`;
  await tx.$executeRaw`DELETE FROM contacts WHERE id = ${id}`;
  return { found: true, scrubbed: runIds.length };
}
