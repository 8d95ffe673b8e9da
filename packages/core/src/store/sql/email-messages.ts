import type { Db, Tx } from "@holdfast/db";

/** What became of a sent email, after the send (issue 43). */
export type EmailOutcome = "opened" | "clicked" | "replied" | "bounced" | "unsubscribed";
export const emailOutcomes = ["sent", "delivered", "bounced", "opened", "clicked", "replied", "unsubscribed"] as const;

/**
 * Records one outcome of the message the effect key sent (holdfast_email_outcome: the row locked, its count up by
 * one; the first occurrence sets the instant and writes its count and timeline rows). "unknown": the organisation
 * sent no such message (a test run's, or one erased since).
 */
export async function emailMessagesRecordOutcome(
  db: Db | Tx,
  orgId: string,
  effectKey: string,
  outcome: EmailOutcome,
  detail: { status: string; detail: string } | null = null,
): Promise<"first" | "again" | "unknown"> {
  const rows = await (db as Tx).$queryRaw<{ r: "first" | "again" | "unknown" }[]>`
    SELECT holdfast_email_outcome(${orgId}, ${effectKey}, ${outcome}, ${detail === null ? null : JSON.stringify(detail)}::jsonb) AS r`;
  return rows[0]?.r ?? "unknown";
}

/** The run that sent the organisation's message with this effect key. */
export async function emailMessagesRunOf(tx: Tx, orgId: string, effectKey: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ runId: string }[]>`SELECT run_id AS "runId" FROM email_messages WHERE org_id = ${orgId} AND effect_key = ${effectKey}`;
  return rows[0]?.runId ?? null;
}

/** The effect keys of the messages the organisation sent with these Message-IDs. */
export async function emailMessagesKeysByMessageIds(tx: Tx, orgId: string, messageIds: string[]): Promise<string[]> {
  if (messageIds.length === 0) return [];
  const rows = await tx.$queryRaw<{ key: string }[]>`
    SELECT effect_key AS key FROM email_messages WHERE org_id = ${orgId} AND message_id = ANY(${messageIds}::text[])`;
  return rows.map((r) => r.key);
}

export interface SentMessageRef {
  orgId: string;
  runId: string;
  stepId: string;
  effectKey: string;
  recipient: string;
}

/**
 * The message a send step sent, across organisations (a bounce's VERP token names the step; the caller checks the
 * token's MAC against what this returns before using any of it).
 */
export async function emailMessagesByStep(tx: Tx, stepId: string): Promise<SentMessageRef | null> {
  const rows = await tx.$queryRaw<SentMessageRef[]>`
    SELECT org_id AS "orgId", run_id AS "runId", step_id AS "stepId", effect_key AS "effectKey", recipient
    FROM email_messages WHERE step_id = ${stepId} ORDER BY sent_at DESC LIMIT 1`;
  return rows[0] ?? null;
}

/** A sent message's outcomes, as the run page shows them. */
export interface EmailMessageView {
  stepId: string;
  nodeId: string;
  messageId: string;
  sentAt: Date;
  deliveredAt: Date | null;
  bouncedAt: Date | null;
  bounceStatus: string | null;
  bounceDetail: string | null;
  openedAt: Date | null;
  openCount: number;
  clickedAt: Date | null;
  clickCount: number;
  repliedAt: Date | null;
  replyCount: number;
  unsubscribedAt: Date | null;
}

export function emailMessagesOfRun(db: Db | Tx, orgId: string, runId: string): Promise<EmailMessageView[]> {
  return (db as Tx).$queryRaw<EmailMessageView[]>`
    SELECT step_id AS "stepId", node_id AS "nodeId", message_id AS "messageId", sent_at AS "sentAt", delivered_at AS "deliveredAt",
           bounced_at AS "bouncedAt", bounce_status AS "bounceStatus", bounce_detail AS "bounceDetail",
           opened_at AS "openedAt", open_count AS "openCount", clicked_at AS "clickedAt", click_count AS "clickCount",
           replied_at AS "repliedAt", reply_count AS "replyCount", unsubscribed_at AS "unsubscribedAt"
    FROM email_messages WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY sent_at`;
}

/** Erasure: the erased contact's address leaves the messages sent to it (their outcomes stay, as counts). */
export function emailMessagesErase(tx: Tx, orgId: string, email: string, hash: string): Promise<number> {
  return tx.$executeRaw`UPDATE email_messages SET recipient = ${hash}, bounce_detail = NULL WHERE org_id = ${orgId} AND recipient = lower(${email})`;
}
