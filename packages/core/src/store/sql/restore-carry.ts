import type { Db, Tx } from "@holdfast/db";

/**
 * Reads from the archive's latest state and writes into a database restored to an earlier point (run/restore/): the
 * rows that record what the outside world saw after that point. Rows travel as JSON (`to_jsonb` out,
 * `jsonb_populate_record` in), so both sides use their own table's columns and types.
 */

/** An effect ledger row as JSON, with the fields the carry decides on. */
export interface LedgerRow {
  org_id: string;
  run_id: string;
  key: string;
  kind: string;
  status: string;
  [column: string]: unknown;
}

/** The cluster's system identifier: copies restored from one base backup share it; any other database does not. */
export async function restoreSystemId(db: Db | Tx): Promise<string> {
  const rows = await db.$queryRaw<{ id: string }[]>`SELECT system_identifier::text AS id FROM pg_control_system()`;
  return rows[0]?.id ?? "";
}

/** Holdfast processes other than restore's own connected to this database now (application_name holdfast-*). */
export async function restoreOtherProcesses(db: Db | Tx): Promise<string[]> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    SELECT DISTINCT application_name AS name FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()
      AND application_name LIKE 'holdfast%' AND application_name NOT LIKE 'holdfast-cli%'`;
  return rows.map((r) => r.name);
}

/** Effect rows changed at or after `since` (read on the latest state). */
export function effectsChangedSince(db: Db | Tx, since: Date): Promise<LedgerRow[]> {
  return db.$queryRaw<{ row: LedgerRow }[]>`SELECT to_jsonb(e) AS row FROM effects e WHERE e.updated_at >= ${since} ORDER BY e.created_at`.then((r) => r.map((x) => x.row));
}

/** The status of each of these effect keys (read on the restored database). */
export async function effectsStatusOf(db: Db | Tx, keys: { org_id: string; key: string }[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db.$queryRaw<{ org_id: string; key: string; status: string }[]>`
    SELECT e.org_id, e.key, e.status FROM effects e
    JOIN jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) AS k(org_id text, key text) ON k.org_id = e.org_id AND k.key = e.key`;
  return new Map(rows.map((r) => [`${r.org_id} ${r.key}`, r.status]));
}

/** Which of these runs the restored database has. */
export async function runsPresent(db: Db | Tx, runIds: string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await db.$queryRaw<{ id: string }[]>`SELECT id FROM runs WHERE id = ANY(${runIds}::text[])`;
  return new Set(rows.map((r) => r.id));
}

/** Writes the latest state's row as it is to be carried (inserted, or replacing a less settled one). */
export async function effectsCarry(tx: Tx, row: LedgerRow): Promise<number> {
  return tx.$executeRaw`
    INSERT INTO effects SELECT * FROM jsonb_populate_record(NULL::effects, ${JSON.stringify(row)}::jsonb)
    ON CONFLICT (org_id, key) DO UPDATE SET status = excluded.status, owner = NULL, lease_until = NULL,
      attempts = GREATEST(effects.attempts, excluded.attempts), provider_idempotent = COALESCE(excluded.provider_idempotent, effects.provider_idempotent),
      result = excluded.result, error = excluded.error, settled_at = excluded.settled_at, started_at = excluded.started_at, updated_at = now()
    WHERE effects.status <> 'settled'`;
}

/**
 * Sent messages and their outcomes (opens, clicks, bounces, replies, unsubscribes) recorded at or after `since`, for
 * runs the restored database has: new messages are inserted, known ones take the later outcomes.
 */
export async function emailMessagesCarry(latest: Db | Tx, restored: Db | Tx, since: Date): Promise<number> {
  const rows = await latest.$queryRaw<{ rows: unknown[] | null }[]>`
    SELECT jsonb_agg(to_jsonb(m)) AS rows FROM email_messages m
    WHERE GREATEST(m.sent_at, m.delivered_at, m.bounced_at, m.opened_at, m.clicked_at, m.replied_at, m.unsubscribed_at) >= ${since}`;
  const list = rows[0]?.rows ?? [];
  if (list.length === 0) return 0;
  return restored.$executeRaw`
    INSERT INTO email_messages
    SELECT m.* FROM jsonb_populate_recordset(NULL::email_messages, ${JSON.stringify(list)}::jsonb) m
    WHERE EXISTS (SELECT 1 FROM runs r WHERE r.org_id = m.org_id AND r.id = m.run_id)
    ON CONFLICT (org_id, effect_key) DO UPDATE SET
      delivered_at = COALESCE(email_messages.delivered_at, excluded.delivered_at),
      bounced_at = COALESCE(email_messages.bounced_at, excluded.bounced_at), bounce_count = GREATEST(email_messages.bounce_count, excluded.bounce_count),
      bounce_status = COALESCE(email_messages.bounce_status, excluded.bounce_status), bounce_detail = COALESCE(email_messages.bounce_detail, excluded.bounce_detail),
      opened_at = COALESCE(email_messages.opened_at, excluded.opened_at), open_count = GREATEST(email_messages.open_count, excluded.open_count),
      clicked_at = COALESCE(email_messages.clicked_at, excluded.clicked_at), click_count = GREATEST(email_messages.click_count, excluded.click_count),
      replied_at = COALESCE(email_messages.replied_at, excluded.replied_at), reply_count = GREATEST(email_messages.reply_count, excluded.reply_count),
      unsubscribed_at = COALESCE(email_messages.unsubscribed_at, excluded.unsubscribed_at)
    WHERE (email_messages.*) IS DISTINCT FROM (excluded.*)`;
}

/** The frequency cap's record of sends at or after `since` (a send after the restore point still counts). */
export async function contactSendsCarry(latest: Db | Tx, restored: Db | Tx, since: Date): Promise<number> {
  const rows = await latest.$queryRaw<{ rows: unknown[] | null }[]>`
    SELECT jsonb_agg(to_jsonb(s)) AS rows FROM contact_sends s WHERE GREATEST(s.sent_at, s.released_at) >= ${since}`;
  const list = rows[0]?.rows ?? [];
  if (list.length === 0) return 0;
  return restored.$executeRaw`
    INSERT INTO contact_sends SELECT s.* FROM jsonb_populate_recordset(NULL::contact_sends, ${JSON.stringify(list)}::jsonb) s
    WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = s.org_id)
    ON CONFLICT (org_id, effect_key) DO UPDATE SET released_at = COALESCE(contact_sends.released_at, excluded.released_at)
    WHERE contact_sends.released_at IS DISTINCT FROM COALESCE(contact_sends.released_at, excluded.released_at)`;
}

/** Addresses suppressed at or after `since` (unsubscribes, hard bounces, complaints): never mailed again. */
export async function suppressionsCarry(latest: Db | Tx, restored: Db | Tx, since: Date): Promise<number> {
  const rows = await latest.$queryRaw<{ rows: unknown[] | null }[]>`
    SELECT jsonb_agg(to_jsonb(s)) AS rows FROM suppressions s WHERE s.created_at >= ${since}`;
  const list = rows[0]?.rows ?? [];
  if (list.length === 0) return 0;
  return restored.$executeRaw`
    INSERT INTO suppressions SELECT s.* FROM jsonb_populate_recordset(NULL::suppressions, ${JSON.stringify(list)}::jsonb) s
    WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = s.org_id)
    ON CONFLICT (org_id, email) DO NOTHING`;
}

/** Consent withdrawn at or after `since`: withdrawn in the restored database too (never a grant: that is re-asked). */
export async function consentWithdrawalsCarry(latest: Db | Tx, restored: Db | Tx, since: Date): Promise<number> {
  const rows = await latest.$queryRaw<{ rows: unknown[] | null }[]>`
    SELECT jsonb_agg(jsonb_build_object('org_id', c.org_id, 'email', c.email, 'at', c.consent_changed_at)) AS rows
    FROM contacts c WHERE c.consent = 'withdrawn' AND c.consent_changed_at >= ${since}`;
  const list = rows[0]?.rows ?? [];
  if (list.length === 0) return 0;
  return restored.$executeRaw`
    INSERT INTO contacts (org_id, email, consent, consent_changed_at)
    SELECT w.org_id, w.email, 'withdrawn', w.at FROM jsonb_to_recordset(${JSON.stringify(list)}::jsonb) AS w(org_id text, email text, at timestamptz)
    WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = w.org_id)
    ON CONFLICT (org_id, email) DO UPDATE SET consent = 'withdrawn', consent_changed_at = excluded.consent_changed_at, updated_at = now()
    WHERE contacts.consent <> 'withdrawn'`;
}

/** Contacts the latest state created at or after `since` (a run started after the point may name one). */
export async function contactsCarry(latest: Db | Tx, restored: Db | Tx, since: Date): Promise<number> {
  const rows = await latest.$queryRaw<{ rows: unknown[] | null }[]>`
    SELECT jsonb_agg(to_jsonb(c)) AS rows FROM contacts c WHERE c.created_at >= ${since}`;
  const list = rows[0]?.rows ?? [];
  if (list.length === 0) return 0;
  return restored.$executeRaw`
    INSERT INTO contacts SELECT c.* FROM jsonb_populate_recordset(NULL::contacts, ${JSON.stringify(list)}::jsonb) c
    WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT DO NOTHING`;
}
