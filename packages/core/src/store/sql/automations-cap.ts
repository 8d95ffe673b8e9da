import type { Db, Tx } from "@holdfast/db";

/** What a capped send of the automation does: wait for the next allowed instant, or skip the email. */
export type CappedAction = "wait" | "skip";

/** An automation's part in the frequency cap (issue 44): exempt (transactional) and what a capped send does. */
export interface AutomationCapSettings {
  automationId: string;
  name: string;
  transactional: boolean;
  cappedAction: CappedAction;
}

/** The run's automation's cap settings, with the organisation's cap (sending_rules.frequency_cap, as stored). */
export async function automationsCapOfRun(db: Db | Tx, orgId: string, runId: string): Promise<(AutomationCapSettings & { frequencyCap: unknown }) | null> {
  const rows = await db.$queryRaw<(AutomationCapSettings & { frequencyCap: unknown })[]>`
    SELECT a.id AS "automationId", a.name, a.transactional, a.capped_action AS "cappedAction", s.frequency_cap AS "frequencyCap"
    FROM runs r JOIN automations a ON a.org_id = r.org_id AND a.id = r.automation_id
    LEFT JOIN sending_rules s ON s.org_id = r.org_id
    WHERE r.org_id = ${orgId} AND r.id = ${runId}`;
  return rows[0] ?? null;
}

export async function automationsCapSettings(db: Db | Tx, orgId: string, automationId: string): Promise<AutomationCapSettings | null> {
  const rows = await db.$queryRaw<AutomationCapSettings[]>`
    SELECT id AS "automationId", name, transactional, capped_action AS "cappedAction" FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0] ?? null;
}

/**
 * What an owner exempted the automation from: the frequency cap (transactional) and the organisation's quiet hours
 * (its own override, off or its own window). Only an owner may publish a new journey into such an automation.
 */
export async function automationsSendingExemptions(tx: Tx, orgId: string, automationId: string): Promise<{ transactional: boolean; ownQuietHours: boolean } | null> {
  const rows = await tx.$queryRaw<{ transactional: boolean; ownQuietHours: boolean }[]>`
    SELECT transactional, quiet_hours IS NOT NULL AS "ownQuietHours" FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  return rows[0] ?? null;
}

/** Marks the automation transactional (exempt from the cap) or not; false when there is no such automation. */
export async function automationsSetTransactional(db: Db | Tx, orgId: string, automationId: string, on: boolean): Promise<boolean> {
  return (await db.$executeRaw`UPDATE automations SET transactional = ${on} WHERE org_id = ${orgId} AND id = ${automationId}`) === 1;
}

export async function automationsSetCappedAction(db: Db | Tx, orgId: string, automationId: string, action: CappedAction): Promise<boolean> {
  return (await db.$executeRaw`UPDATE automations SET capped_action = ${action} WHERE org_id = ${orgId} AND id = ${automationId}`) === 1;
}
