import type { Db, Tx } from "@holdfast/db";
import { approvalsErase } from "./approvals";
import { approvalEditsErase } from "./approval-edits";
import { runsTouch } from "./runs";
import { emailMessagesErase } from "./email-messages";
import { signalsErase } from "./signals";

export type Consent = "granted" | "unknown" | "withdrawn";

export interface RunContact {
  id: string;
  email: string;
  timeZone: string | null;
  consent: Consent;
  /** Name, company and kept fields (base/templates/contact.ts). */
  attributes: Record<string, unknown>;
}

/** The run's contact as it is now (templates see it as `contact`). */
export async function contactsOfRun(tx: Tx, orgId: string, runId: string): Promise<RunContact | null> {
  // A test run whose sample names no stored contact has the sample's in test_runs (never written to contacts).
  const rows = await tx.$queryRaw<RunContact[]>`
    SELECT c.id, c.email, c.time_zone AS "timeZone", c.consent, c.attributes
    FROM runs r JOIN contacts c ON c.id = r.contact_id AND c.org_id = r.org_id
    WHERE r.org_id = ${orgId} AND r.id = ${runId}
    UNION ALL
    SELECT 'test:' || (t.contact->>'email'), t.contact->>'email', t.contact->>'timeZone', 'unknown', coalesce(t.contact->'attributes', '{}'::jsonb)
    FROM test_runs t WHERE t.org_id = ${orgId} AND t.run_id = ${runId} AND t.contact IS NOT NULL
    LIMIT 1`;
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
 * and errors, effect results and errors, timeline data (a `contact.erased` row remains), the replies they sent
 * (signals) and their runs' approvals (title, content, the email draft and its edits' texts). The contact row is kept as a
 * tombstone whose email is the address's hash (no time zone, consent withdrawn), so erasing again (after effects that
 * were in flight settled and recorded something) finds its runs; its suppression entry becomes the hash too.
 */
export async function contactsEraseData(tx: Tx, orgId: string, email: string, by: string): Promise<{ found: boolean; scrubbed: number }> {
  const hashed = await tx.$queryRaw<{ h: string }[]>`SELECT 'sha256:' || encode(sha256(convert_to(lower(${email}), 'UTF8')), 'hex') AS h`;
  const hash = (hashed[0] as { h: string }).h;
  await tx.$executeRaw`
    INSERT INTO suppressions (org_id, email, reason)
    SELECT org_id, ${hash}, reason FROM suppressions WHERE org_id = ${orgId} AND email = lower(${email})
    ON CONFLICT (org_id, email) DO NOTHING`;
  await tx.$executeRaw`DELETE FROM suppressions WHERE org_id = ${orgId} AND email = lower(${email})`;
  const contacts = await tx.$queryRaw<{ id: string; tomb: boolean }[]>`
    SELECT id, email = ${hash} AS tomb FROM contacts WHERE org_id = ${orgId} AND email IN (lower(${email}), ${hash})
    ORDER BY (email = ${hash}) DESC, created_at FOR UPDATE`;
  const first = contacts[0];
  if (!first) return { found: false, scrubbed: 0 };
  const ids = contacts.map((c) => c.id);
  const erased = JSON.stringify({ erased: true });
  // Copies outside the runs: an automation's sample payload naming the address (the editor's picker and Test run
  // read it), and the delivery log's rows of those runs or keyed by the address.
  await tx.$executeRaw`
    UPDATE automations SET sample_input = NULL
    WHERE org_id = ${orgId} AND sample_input IS NOT NULL
      AND (position(lower(${email}) IN lower(sample_input::text)) > 0
           OR sample_input IN (SELECT input FROM runs WHERE org_id = ${orgId} AND contact_id = ANY(${ids}::text[])))`;
  await tx.$executeRaw`
    DELETE FROM trigger_deliveries
    WHERE org_id = ${orgId}
      AND (run_id IN (SELECT id FROM runs WHERE org_id = ${orgId} AND contact_id = ANY(${ids}::text[]))
           OR position(lower(${email}) IN lower(coalesce(start_key, '') || ' ' || coalesce(webhook_id, ''))) > 0)`;
  const runs = await tx.$queryRaw<{ id: string }[]>`
    UPDATE runs SET input = ${erased}::jsonb, error = CASE WHEN error IS NULL THEN NULL ELSE ${erased}::jsonb END,
                    contact_id = ${first.id}, updated_at = now()
    WHERE org_id = ${orgId} AND contact_id = ANY(${ids}::text[])
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
  // Emails to the address from other contacts' runs (a colleague notified, a fixed recipient): a send step records
  // what it sent (to, subject, bodies), so that record goes too, in the step's output and the effect's result.
  const mailed = await tx.$queryRaw<{ runId: string }[]>`
    UPDATE steps SET output = ${erased}::jsonb
    WHERE org_id = ${orgId} AND kind = 'send_email' AND output IS NOT NULL AND lower(output->>'to') = lower(${email})
    RETURNING run_id AS "runId"`;
  // Every run whose steps were rewritten moves its seq: a worker's walk from the steps it read (or carries along a
  // chain, run/apply/inline.ts stepsAfterSettle) no longer applies, and the next walk reads the erased rows.
  await runsTouch(tx, [...new Set([...runIds, ...mailed.map((m) => m.runId)])]);
  await tx.$executeRaw`
    UPDATE effects SET result = ${erased}::jsonb
    WHERE org_id = ${orgId} AND kind = 'send_email' AND result IS NOT NULL AND lower(result->>'to') = lower(${email})`;
  await tx.$executeRaw`
    UPDATE run_events SET data = NULL WHERE org_id = ${orgId} AND run_id = ANY(${runIds}::text[]) AND data IS NOT NULL`;
  await signalsErase(tx, orgId, runIds, email, hash);
  await emailMessagesErase(tx, orgId, email, hash);
  await approvalsErase(tx, orgId, runIds);
  await approvalEditsErase(tx, orgId, runIds);
  await tx.$executeRaw`
    INSERT INTO run_events (org_id, run_id, type, worker)
    SELECT ${orgId}, id, 'contact.erased', ${by} FROM unnest(${runIds}::text[]) AS id`;
  await tx.$executeRaw`DELETE FROM contacts WHERE id = ANY(${ids}::text[]) AND id <> ${first.id}`;
  await tx.$executeRaw`
    UPDATE contacts SET email = ${hash}, time_zone = NULL, attributes = '{}'::jsonb, consent = 'withdrawn', consent_changed_at = now(), updated_at = now()
    WHERE id = ${first.id}`;
  return { found: true, scrubbed: runIds.length };
}

/** Sets a contact's stored time zone; returns the zone it had (null row: no such contact in the organisation). */
export async function contactsSetZone(tx: Tx, orgId: string, contactId: string, zone: string | null): Promise<{ oldZone: string | null; changed: boolean } | null> {
  const rows = await tx.$queryRaw<{ oldZone: string | null; changed: boolean }[]>`
    WITH old AS (SELECT id, time_zone FROM contacts WHERE org_id = ${orgId} AND id = ${contactId} FOR UPDATE),
    upd AS (
      UPDATE contacts c SET time_zone = ${zone}::text, updated_at = now() FROM old
      WHERE c.id = old.id AND old.time_zone IS DISTINCT FROM ${zone}::text
      RETURNING c.id
    )
    SELECT old.time_zone AS "oldZone", EXISTS (SELECT 1 FROM upd) AS changed FROM old`;
  return rows[0] ?? null;
}

export interface ContactDetail {
  id: string;
  email: string;
  timeZone: string | null;
  consent: Consent;
  consentChangedAt: Date | null;
  createdAt: Date;
  suppressed: string | null;
  erased: boolean;
  /** Name, company and kept fields (versions/kinds/declared-fields.ts). */
  attributes: Record<string, unknown>;
}

/** One contact as Settings shows it: consent, suppression (by address or its erased hash), time zone. */
export async function contactsDetail(tx: Tx, orgId: string, contactId: string): Promise<ContactDetail | null> {
  const rows = await tx.$queryRaw<ContactDetail[]>`
    SELECT c.id, c.email, c.time_zone AS "timeZone", c.consent, c.consent_changed_at AS "consentChangedAt", c.created_at AS "createdAt",
           (SELECT s.reason FROM suppressions s WHERE s.org_id = c.org_id
              AND s.email IN (c.email, 'sha256:' || encode(sha256(convert_to(c.email, 'UTF8')), 'hex')) LIMIT 1) AS suppressed,
           c.email LIKE 'sha256:%' AS erased, c.attributes
    FROM contacts c WHERE c.org_id = ${orgId} AND c.id = ${contactId}`;
  return rows[0] ?? null;
}

export interface ContactRun {
  id: string;
  status: string;
  automation: string;
  createdAt: Date;
  waiting: boolean;
}

/** The contact's most recent runs (newest first). */
export function contactsRuns(tx: Tx, orgId: string, contactId: string, limit = 50): Promise<ContactRun[]> {
  return tx.$queryRaw<ContactRun[]>`
    SELECT r.id, r.status, a.name AS automation, r.created_at AS "createdAt",
           EXISTS (SELECT 1 FROM timers t WHERE t.org_id = r.org_id AND t.run_id = r.id AND t.fired_at IS NULL) AS waiting
    FROM runs r JOIN automations a ON a.org_id = r.org_id AND a.id = r.automation_id
    WHERE r.org_id = ${orgId} AND r.contact_id = ${contactId}
    ORDER BY r.created_at DESC LIMIT ${limit}`;
}

/** How many runs erasing the address would cancel (its running runs), and how many runs it would scrub. */
export async function contactsEraseCount(tx: Tx, orgId: string, email: string): Promise<{ running: number; total: number }> {
  const rows = await tx.$queryRaw<{ running: number; total: number }[]>`
    SELECT count(*) FILTER (WHERE r.status = 'running')::int AS running, count(r.id)::int AS total
    FROM contacts c JOIN runs r ON r.org_id = c.org_id AND r.contact_id = c.id
    WHERE c.org_id = ${orgId}
      AND c.email IN (lower(${email}), 'sha256:' || encode(sha256(convert_to(lower(${email}), 'UTF8')), 'hex'))`;
  return rows[0] ?? { running: 0, total: 0 };
}

/** A contact's id by its address (lower-cased), or null. */
export async function contactsIdByEmail(tx: Tx, orgId: string, email: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM contacts WHERE org_id = ${orgId} AND email = lower(${email})`;
  return rows[0]?.id ?? null;
}

/** Running runs of the organisation's contact with this email (stored plainly or, once erased, as its sha256). */
export function contactsRunningRuns(db: Db | Tx, orgId: string, email: string): Promise<{ id: string }[]> {
  return db.$queryRaw<{ id: string }[]>`
    SELECT r.id FROM runs r JOIN contacts c ON c.id = r.contact_id
    WHERE c.org_id = ${orgId} AND r.status = 'running'
      AND c.email IN (lower(${email}), 'sha256:' || encode(sha256(convert_to(lower(${email}), 'UTF8')), 'hex'))`;
}

/** Contacts whose email contains `query` (taken literally: % and _ match themselves), by email (at most 200). */
export function contactsSearch(
  db: Db | Tx,
  orgId: string,
  query: string,
): Promise<{ id: string; email: string; name: string | null; company: string | null; timeZone: string | null; consent: string }[]> {
  return db.$queryRaw<{ id: string; email: string; name: string | null; company: string | null; timeZone: string | null; consent: string }[]>`
    SELECT id, email, attributes->>'name' AS name, attributes->>'company' AS company, time_zone AS "timeZone", consent FROM contacts
    WHERE org_id = ${orgId} AND email ILIKE ${`%${query.replace(/[\\%_]/g, (m) => `\\${m}`)}%`}
    ORDER BY email LIMIT 200`;
}

/** A contact's consent and zone by its address, its row locked for a change (run/contacts/change.ts); null: none yet. */
export async function contactsLockByEmail(tx: Tx, orgId: string, email: string): Promise<{ consent: Consent; timeZone: string | null } | null> {
  const rows = await tx.$queryRaw<{ consent: Consent; timeZone: string | null }[]>`
    SELECT consent, time_zone AS "timeZone" FROM contacts WHERE org_id = ${orgId} AND email = lower(${email}) FOR UPDATE`;
  return rows[0] ?? null;
}

/** A contact's consent and zone by its id, its row locked for a change (run/contacts/change.ts); null: no such contact. */
export async function contactsLockById(tx: Tx, orgId: string, contactId: string): Promise<{ consent: Consent; timeZone: string | null } | null> {
  const rows = await tx.$queryRaw<{ consent: Consent; timeZone: string | null }[]>`
    SELECT consent, time_zone AS "timeZone" FROM contacts WHERE org_id = ${orgId} AND id = ${contactId} FOR UPDATE`;
  return rows[0] ?? null;
}

/**
 * Creates the contact with its zone and consent, or sets an existing one's consent (its change time moves only when
 * it changed); the zone of an existing contact is not written here (run/timers/contact-zone.ts moves its waits too).
 */
export async function contactsUpsertConsent(
  db: Db | Tx,
  c: { orgId: string; email: string; timeZone: string | null; consent: Consent },
): Promise<string | undefined> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO contacts (org_id, email, time_zone, consent, consent_changed_at) VALUES (${c.orgId}, ${c.email}, ${c.timeZone}, ${c.consent}, now())
    ON CONFLICT (org_id, email) DO UPDATE SET consent = EXCLUDED.consent,
      consent_changed_at = CASE WHEN contacts.consent <> EXCLUDED.consent THEN now() ELSE contacts.consent_changed_at END, updated_at = now()
    RETURNING id`;
  return rows[0]?.id;
}

/**
 * Replaces a contact's attributes (Settings: name, company, kept fields), unless erased; null: no such contact (or
 * an erased one). `changed` false: it had these already (a repeated save changes nothing).
 */
export async function contactsSetAttributes(tx: Tx, orgId: string, contactId: string, attributes: Record<string, unknown>): Promise<{ changed: boolean } | null> {
  const rows = await tx.$queryRaw<{ changed: boolean }[]>`
    WITH old AS (SELECT id, attributes FROM contacts WHERE org_id = ${orgId} AND id = ${contactId} AND email NOT LIKE 'sha256:%' FOR UPDATE),
    upd AS (
      UPDATE contacts c SET attributes = ${JSON.stringify(attributes)}::jsonb, updated_at = now() FROM old
      WHERE c.id = old.id AND old.attributes IS DISTINCT FROM ${JSON.stringify(attributes)}::jsonb
      RETURNING c.id
    )
    SELECT EXISTS (SELECT 1 FROM upd) AS changed FROM old`;
  return rows[0] ?? null;
}
