import type { Db, Tx } from "@holdfast/db";

/**
 * The sending_rules table (one row per organisation that set a rule) and the automations' quiet_hours override
 * (prisma/migrations/20261208100000_sending_rules: the JSON shapes). Every statement is scoped by organisation.
 */

export interface QuietHoursOfRun {
  /** automations.quiet_hours: null (the organisation's), {off: true}, or a window. */
  automation: unknown;
  /** sending_rules.quiet_hours, or null (no row or no window). */
  organisation: unknown;
  /** The run's contact's stored zone (a test run: its sample contact's), or null. */
  contactZone: string | null;
  /** The run's now: the database's now(), or a test run's virtual clock. */
  now: Date;
}

/**
 * What quiet hours need for one send, in one statement: the automation's override, the organisation's window, the
 * contact's stored zone and the run's now (now() plus a test run's clock offset: store/sql/test-runs.ts runNow).
 */
export async function sendingRulesQuietHoursOfRun(db: Db | Tx, orgId: string, runId: string): Promise<QuietHoursOfRun | null> {
  const rows = await db.$queryRaw<QuietHoursOfRun[]>`
    SELECT a.quiet_hours AS automation, sr.quiet_hours AS organisation,
           COALESCE(c.time_zone, t.contact->>'timeZone') AS "contactZone",
           now() + make_interval(secs => COALESCE(t.clock_offset_ms, 0) / 1000.0) AS now
    FROM runs r
    JOIN automations a ON a.org_id = r.org_id AND a.id = r.automation_id
    LEFT JOIN sending_rules sr ON sr.org_id = r.org_id
    LEFT JOIN contacts c ON c.org_id = r.org_id AND c.id = r.contact_id
    LEFT JOIN test_runs t ON t.org_id = r.org_id AND t.run_id = r.id
    WHERE r.org_id = ${orgId} AND r.id = ${runId}`;
  return rows[0] ?? null;
}

export interface OrgQuietHours {
  quietHours: unknown;
  updatedAt: Date | null;
  updatedBy: string | null;
}

export async function sendingRulesQuietHours(db: Db | Tx, orgId: string): Promise<OrgQuietHours> {
  const rows = await db.$queryRaw<OrgQuietHours[]>`
    SELECT quiet_hours AS "quietHours", updated_at AS "updatedAt", updated_by AS "updatedBy" FROM sending_rules WHERE org_id = ${orgId}`;
  return rows[0] ?? { quietHours: null, updatedAt: null, updatedBy: null };
}

/**
 * Sets (null: clears) the organisation's quiet hours, with who and when; the frequency cap on the row is kept. false:
 * nothing changed (the same window again: a repeated click writes nothing).
 */
export async function sendingRulesSetQuietHours(db: Db | Tx, orgId: string, quietHours: object | null, by: string): Promise<boolean> {
  const json = quietHours === null ? null : JSON.stringify(quietHours);
  const n = await db.$executeRaw`
    INSERT INTO sending_rules (org_id, quiet_hours, updated_by) VALUES (${orgId}, ${json}::jsonb, ${by.slice(0, 200)})
    ON CONFLICT (org_id) DO UPDATE SET quiet_hours = EXCLUDED.quiet_hours, updated_at = now(), updated_by = EXCLUDED.updated_by
    WHERE sending_rules.quiet_hours IS DISTINCT FROM EXCLUDED.quiet_hours`;
  return n > 0;
}

/** automations.quiet_hours of one automation; undefined: no such automation in the organisation. */
export async function automationsQuietHours(db: Db | Tx, orgId: string, automationId: string): Promise<{ quietHours: unknown } | undefined> {
  const rows = await db.$queryRaw<{ quietHours: unknown }[]>`SELECT quiet_hours AS "quietHours" FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0];
}

/** Sets the automation's override (null: the organisation's); false: no such automation. */
export async function automationsSetQuietHours(db: Db | Tx, orgId: string, automationId: string, quietHours: object | null): Promise<boolean> {
  const json = quietHours === null ? null : JSON.stringify(quietHours);
  return (await db.$executeRaw`UPDATE automations SET quiet_hours = ${json}::jsonb WHERE org_id = ${orgId} AND id = ${automationId}`) > 0;
}

/** sending_rules.frequency_cap (issue 44), as stored, with who changed the organisation's sending rules last. */
export interface StoredFrequencyCap {
  frequencyCap: unknown;
  updatedAt: Date | null;
  updatedBy: string | null;
}

export async function sendingRulesFrequencyCap(db: Db | Tx, orgId: string): Promise<StoredFrequencyCap> {
  const rows = await db.$queryRaw<StoredFrequencyCap[]>`
    SELECT frequency_cap AS "frequencyCap", updated_at AS "updatedAt", updated_by AS "updatedBy" FROM sending_rules WHERE org_id = ${orgId}`;
  return rows[0] ?? { frequencyCap: null, updatedAt: null, updatedBy: null };
}

/** Sets (or, with null, clears) the cap, recording who changed it and when (the database's clock). */
export async function sendingRulesSetFrequencyCap(db: Db | Tx, orgId: string, cap: { count: number; periodHours: number } | null, by: string): Promise<void> {
  const json = cap === null ? null : JSON.stringify({ count: cap.count, periodHours: cap.periodHours });
  await db.$executeRaw`
    INSERT INTO sending_rules (org_id, frequency_cap, updated_by) VALUES (${orgId}, ${json}::jsonb, ${by.slice(0, 200)})
    ON CONFLICT (org_id) DO UPDATE SET frequency_cap = EXCLUDED.frequency_cap, updated_at = now(), updated_by = EXCLUDED.updated_by`;
}
