import type { Db, Tx } from "@holdfast/db";

/**
 * goal_events: a goal met by a contact of an automation (the contact is converted for it). A goal URL's delivery is
 * written once per webhook-id (goal_events_webhook_key), so a repeated delivery finds its first one and changes nothing.
 */
export interface GoalEventInsert {
  orgId: string;
  automationId: string;
  contactId: string;
  goal: "replied" | "clicked" | "event";
  webhookId: string | null;
  /** When the goal was met as its source says; null: now, by the database clock. */
  metAt: Date | null;
}

/** The new row's id, or null when a delivery with this webhook-id was written before. */
export async function goalEventsInsertIfNew(tx: Tx, e: GoalEventInsert): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO goal_events (org_id, automation_id, contact_id, goal, webhook_id, met_at)
    VALUES (${e.orgId}, ${e.automationId}, ${e.contactId}, ${e.goal}, ${e.webhookId}, COALESCE(${e.metAt}::timestamptz, now()))
    ON CONFLICT (org_id, automation_id, webhook_id) WHERE webhook_id IS NOT NULL DO NOTHING
    RETURNING id`;
  return rows[0]?.id ?? null;
}

export async function goalEventsSetRunsEnded(tx: Tx, orgId: string, id: string, runsEnded: number): Promise<void> {
  await tx.$executeRaw`UPDATE goal_events SET runs_ended = ${runsEnded} WHERE org_id = ${orgId} AND id = ${id}`;
}

/** Whether the contact has met the automation's goal (is converted for it). */
export async function goalEventsContactConverted(db: Db | Tx, orgId: string, automationId: string, contactId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM goal_events WHERE org_id = ${orgId} AND automation_id = ${automationId} AND contact_id = ${contactId}`;
  return (rows[0]?.n ?? 0) > 0;
}
