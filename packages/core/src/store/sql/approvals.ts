import type { Db, Tx } from "@holdfast/db";
import type { Approvers, Decision, EmailDigest, EmailDraft, OnDeadline } from "../../base/types/approvals";

export type ApprovalStatus = "pending" | "approved" | "rejected" | "escalated" | "expired" | "cancelled";
export type DecidedVia = "slack" | "inbox" | "deadline" | "run" | "test";
export type NotifyState = "none" | "post" | "update" | "done" | "failed";

export interface SlackTarget {
  connection: string;
  channel: string;
}
export interface SlackMessage {
  channel: string;
  ts: string;
}

export interface ApprovalRow {
  id: string;
  orgId: string;
  runId: string;
  stepId: string;
  nodeId: string;
  stage: number;
  approvers: Approvers;
  title: string;
  content: string;
  digest: string;
  deadlineAt: Date;
  onDeadline: OnDeadline;
  status: ApprovalStatus;
  decidedBy: string | null;
  decidedByName: string | null;
  decidedVia: DecidedVia | null;
  decidedAt: Date | null;
  slack: SlackTarget | null;
  slackMessage: SlackMessage | null;
  notifyState: NotifyState;
  notifyError: string | null;
  revision: number;
  /** An approval of an email: the email it shows now (after an edit, the edited one). */
  emailDraft: EmailDraft | null;
  emailDigest: EmailDigest | null;
  createdAt: Date;
  updatedAt: Date;
}

const columns = `a.id, a.org_id AS "orgId", a.run_id AS "runId", a.step_id AS "stepId", a.node_id AS "nodeId", a.stage,
  a.approvers, a.title, a.content, a.digest, a.deadline_at AS "deadlineAt", a.on_deadline AS "onDeadline", a.status,
  a.decided_by AS "decidedBy", a.decided_by_name AS "decidedByName", a.decided_via AS "decidedVia",
  a.decided_at AS "decidedAt", a.slack, a.slack_message AS "slackMessage", a.notify_state AS "notifyState",
  a.notify_error AS "notifyError", a.revision, a.email_draft AS "emailDraft", a.email_digest AS "emailDigest", a.created_at AS "createdAt", a.updated_at AS "updatedAt"`;

export type NewApproval = Pick<
  ApprovalRow,
  "orgId" | "runId" | "stepId" | "nodeId" | "stage" | "approvers" | "title" | "content" | "digest" | "onDeadline" | "slack"
> & { deadlineSeconds: number; emailDigest?: EmailDigest | null; emailDraft?: EmailDraft | null };

/** The request for a decision, due `deadlineSeconds` from the database's now; its step listens for `approval:<id>`. */
export async function approvalsInsert(tx: Tx, a: NewApproval): Promise<{ id: string; deadlineAt: Date }> {
  const rows = await tx.$queryRaw<{ id: string; deadlineAt: Date }[]>`
    INSERT INTO approvals (org_id, run_id, step_id, node_id, stage, approvers, title, content, digest, deadline_at,
                           on_deadline, slack, notify_state, email_digest, email_draft)
    VALUES (${a.orgId}, ${a.runId}, ${a.stepId}, ${a.nodeId}, ${a.stage}, ${JSON.stringify(a.approvers)}::jsonb,
            ${a.title}, ${a.content}, ${a.digest}, now() + make_interval(secs => ${a.deadlineSeconds}),
            ${JSON.stringify(a.onDeadline)}::jsonb, ${a.slack ? JSON.stringify(a.slack) : null}::jsonb,
            ${a.slack ? "post" : "none"}, ${a.emailDigest ? JSON.stringify(a.emailDigest) : null}::jsonb,
            ${a.emailDraft ? JSON.stringify(a.emailDraft) : null}::jsonb)
    RETURNING id, deadline_at AS "deadlineAt"`;
  const row = rows[0];
  if (!row) throw new Error(`approval for step ${a.stepId} not inserted`);
  await tx.$executeRaw`UPDATE steps SET correlation_key = ${approvalKey(row.id)} WHERE org_id = ${a.orgId} AND id = ${a.stepId}`;
  return row;
}

/** The signal key an approval step listens for. */
export const approvalKey = (approvalId: string) => `approval:${approvalId}`;

/** Locks one approval (decisions on it serialise here) with what a decision needs to know about its run. */
export async function approvalsLockForDecision(
  tx: Tx,
  orgId: string,
  approvalId: string,
): Promise<(ApprovalRow & { runStatus: string; cancelRequested: boolean; pastDeadline: boolean }) | undefined> {
  const rows = await tx.$queryRawUnsafe<(ApprovalRow & { runStatus: string; cancelRequested: boolean; pastDeadline: boolean })[]>(
    `SELECT ${columns}, r.status AS "runStatus", r.cancel_requested_at IS NOT NULL AS "cancelRequested", a.deadline_at <= now() AS "pastDeadline"
     FROM approvals a JOIN runs r ON r.id = a.run_id AND r.org_id = a.org_id
     WHERE a.org_id = $1 AND a.id = $2
     FOR UPDATE OF a`,
    orgId,
    approvalId,
  );
  return rows[0];
}

export async function approvalsGet(tx: Tx, orgId: string, approvalId: string): Promise<ApprovalRow | undefined> {
  const rows = await tx.$queryRawUnsafe<ApprovalRow[]>(`SELECT ${columns} FROM approvals a WHERE a.org_id = $1 AND a.id = $2`, orgId, approvalId);
  return rows[0];
}

/** The latest approval of a run that approves the email of send step `sendNodeId`, with what it showed. */
export interface EmailApproval {
  id: string;
  nodeId: string;
  status: ApprovalStatus;
  decidedByName: string | null;
  decidedVia: DecidedVia | null;
  emailDigest: EmailDigest;
  /** The email as edited by an approver (null: not edited; the send renders it as the approver saw it). */
  edited: EmailDraft | null;
}

/** By the run's step ids (`stepIds`, as the claim read them): the unique step_id index finds them on every send. */
export async function approvalsOfEmail(tx: Tx, orgId: string, stepIds: string[], sendNodeId: string): Promise<EmailApproval | null> {
  if (stepIds.length === 0) return null;
  const rows = await tx.$queryRaw<EmailApproval[]>`
    SELECT id, node_id AS "nodeId", status, decided_by_name AS "decidedByName", decided_via AS "decidedVia", email_digest AS "emailDigest",
           CASE WHEN EXISTS (SELECT 1 FROM approval_edits e WHERE e.org_id = a.org_id AND e.approval_id = a.id) THEN email_draft END AS edited
    FROM approvals a
    WHERE org_id = ${orgId} AND step_id = ANY(${stepIds}::text[]) AND email_digest->>'node' = ${sendNodeId}
    ORDER BY created_at DESC, stage DESC
    LIMIT 1`;
  return rows[0] ?? null;
}

export async function approvalsForRun(tx: Tx, orgId: string, runId: string): Promise<ApprovalRow[]> {
  return tx.$queryRawUnsafe<ApprovalRow[]>(`SELECT ${columns} FROM approvals a WHERE a.org_id = $1 AND a.run_id = $2 ORDER BY a.created_at`, orgId, runId);
}

/**
 * The approvals of one organisation: pending (soonest deadline first) or decided (latest first). A test run's are
 * not here: the tester decides them on the test run's page (run/test-runs/), nobody's inbox is asked.
 */
export async function approvalsList(tx: Tx, orgId: string, which: "pending" | "decided", limit = 100): Promise<ApprovalRow[]> {
  return which === "pending"
    ? tx.$queryRawUnsafe<ApprovalRow[]>(
        `SELECT ${columns} FROM approvals a WHERE a.org_id = $1 AND a.status = 'pending'
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.org_id = a.org_id AND r.id = a.run_id AND r.test)
         ORDER BY a.deadline_at, a.id LIMIT $2`,
        orgId,
        limit,
      )
    : tx.$queryRawUnsafe<ApprovalRow[]>(
        `SELECT ${columns} FROM approvals a WHERE a.org_id = $1 AND a.status <> 'pending'
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.org_id = a.org_id AND r.id = a.run_id AND r.test)
         ORDER BY a.decided_at DESC, a.id LIMIT $2`,
        orgId,
        limit,
      );
}

/** What a Slack message must show after a change: post it if never posted (and still worth posting), else update. */
const notifyAfterChange = `CASE WHEN slack IS NULL THEN 'none'
  WHEN slack_message IS NULL THEN (CASE WHEN notify_state = 'post' THEN 'post' ELSE 'done' END)
  ELSE 'update' END`;

/** Records the decision (the row is locked by approvalsLockForDecision and still pending). */
export async function approvalsDecide(
  tx: Tx,
  orgId: string,
  approvalId: string,
  d: { status: Decision; by: string | null; byName: string; via: DecidedVia },
): Promise<{ notify: boolean }> {
  const rows = await tx.$queryRawUnsafe<{ notifyState: NotifyState }[]>(
    `UPDATE approvals SET status = $3, decided_by = $4, decided_by_name = $5, decided_via = $6, decided_at = now(),
            notify_state = ${notifyAfterChange}, revision = revision + 1, updated_at = now()
     WHERE org_id = $1 AND id = $2 AND status = 'pending'
     RETURNING notify_state AS "notifyState"`,
    orgId,
    approvalId,
    d.status,
    d.by,
    d.byName,
    d.via,
  );
  const row = rows[0];
  if (!row) throw new Error(`approval ${approvalId} was not pending`);
  return { notify: row.notifyState === "post" || row.notifyState === "update" };
}

/**
 * Closes the pending approval of a step whose deadline passed (escalated, expired, or decided by the default), or
 * every pending approval of a run that stopped (cancelled). Returns the ids whose Slack message now owes an update.
 */
export async function approvalsClose(
  tx: Tx,
  orgId: string,
  which: { stepId: string } | { runId: string },
  status: Exclude<ApprovalStatus, "pending">,
  via: DecidedVia,
  byName: string,
): Promise<string[]> {
  const [column, value] = "stepId" in which ? ["step_id", which.stepId] : ["run_id", which.runId];
  const rows = await tx.$queryRawUnsafe<{ id: string; notifyState: NotifyState }[]>(
    `UPDATE approvals SET status = $3, decided_via = $4, decided_by_name = $5, decided_at = now(),
            notify_state = ${notifyAfterChange}, revision = revision + 1, updated_at = now()
     WHERE org_id = $1 AND ${column} = $2 AND status = 'pending'
     RETURNING id, notify_state AS "notifyState"`,
    orgId,
    value,
    status,
    via,
    byName,
  );
  return rows.filter((r) => r.notifyState === "post" || r.notifyState === "update").map((r) => r.id);
}

/**
 * New content under review (and its digest): decisions bound to the old digest are refused from now on. An approval
 * of an email no longer shows that email as rendered, so its send will not go out on this approval (`revised`).
 */
export async function approvalsRevise(tx: Tx, orgId: string, approvalId: string, content: string, digest: string): Promise<ApprovalRow | undefined> {
  const rows = await tx.$queryRawUnsafe<ApprovalRow[]>(
    `UPDATE approvals a SET content = $3, digest = $4, revision = revision + 1, updated_at = now(),
            email_digest = CASE WHEN email_digest IS NULL THEN NULL ELSE email_digest || '{"revised": true}'::jsonb END,
            notify_state = CASE WHEN slack IS NULL THEN 'none' WHEN slack_message IS NULL THEN 'post' ELSE 'update' END
     WHERE org_id = $1 AND id = $2 AND status = 'pending'
     RETURNING ${columns}`,
    orgId,
    approvalId,
    content,
    digest,
  );
  return rows[0];
}

/**
 * An approver's edit of the email under review (the row is locked and pending): the new content, its digest, the
 * email's digests and parts. Decisions bound to the old digest are refused from now on; the Slack message owes an
 * update (its buttons carry the new digest).
 */
export async function approvalsApplyEdit(
  tx: Tx,
  orgId: string,
  approvalId: string,
  e: { content: string; digest: string; emailDigest: EmailDigest; emailDraft: EmailDraft },
): Promise<{ notify: boolean }> {
  const rows = await tx.$queryRawUnsafe<{ notifyState: NotifyState }[]>(
    `UPDATE approvals SET content = $3, digest = $4, email_digest = $5::jsonb, email_draft = $6::jsonb, revision = revision + 1,
            updated_at = now(), notify_state = ${notifyAfterChange}
     WHERE org_id = $1 AND id = $2 AND status = 'pending'
     RETURNING notify_state AS "notifyState"`,
    orgId,
    approvalId,
    e.content,
    e.digest,
    JSON.stringify(e.emailDigest),
    JSON.stringify(e.emailDraft),
  );
  const row = rows[0];
  if (!row) throw new Error(`approval ${approvalId} was not pending`);
  return { notify: row.notifyState === "post" || row.notifyState === "update" };
}

/**
 * Takes the Slack notification of an approval for `leaseSeconds` (a lease: a notifier that dies leaves it to be taken again).
 * `uncertain`: an earlier attempt took it and may have posted, so the post is looked up before posting again.
 */
export async function approvalsTakeNotify(
  tx: Tx,
  orgId: string,
  approvalId: string,
  leaseSeconds = 30,
): Promise<(ApprovalRow & { uncertain: boolean }) | undefined> {
  const rows = await tx.$queryRawUnsafe<(ApprovalRow & { uncertain: boolean })[]>(
    `WITH before AS (SELECT id, notify_attempted_at FROM approvals WHERE org_id = $1 AND id = $2 FOR UPDATE)
     UPDATE approvals a SET notify_attempted_at = now()
     FROM before b
     WHERE a.id = b.id AND a.notify_state IN ('post', 'update')
       AND (a.notify_attempted_at IS NULL OR a.notify_attempted_at < now() - make_interval(secs => $3))
     RETURNING ${columns}, b.notify_attempted_at IS NOT NULL AS uncertain`,
    orgId,
    approvalId,
    leaseSeconds,
  );
  return rows[0];
}

/** The notifier's answer: the message's place, and 'done' unless the row changed since it was read (then 'update'). */
export async function approvalsNotified(
  tx: Tx,
  orgId: string,
  approvalId: string,
  message: SlackMessage,
  shownRevision: number,
): Promise<NotifyState | undefined> {
  const rows = await tx.$queryRawUnsafe<{ notifyState: NotifyState }[]>(
    `UPDATE approvals SET slack_message = $3::jsonb, notify_error = NULL, notify_attempted_at = NULL,
            notify_state = CASE WHEN revision = $4 THEN 'done' ELSE 'update' END
     WHERE org_id = $1 AND id = $2
     RETURNING notify_state AS "notifyState"`,
    orgId,
    approvalId,
    JSON.stringify(message),
    shownRevision,
  );
  return rows[0]?.notifyState;
}

export async function approvalsNotifyFailed(tx: Tx, orgId: string, approvalId: string, error: string, final: boolean): Promise<void> {
  await tx.$executeRawUnsafe(
    `UPDATE approvals SET notify_error = $3, notify_state = CASE WHEN $4 THEN 'failed' ELSE notify_state END,
            notify_attempted_at = CASE WHEN $4 THEN NULL ELSE notify_attempted_at END
     WHERE org_id = $1 AND id = $2`,
    orgId,
    approvalId,
    error,
    final,
  );
}

/** Slack notifications owed and not taken for a while (the wake-up was lost, or the notifier died): wake them again. */
export async function approvalsRewakeNotify(tx: Tx, limit: number, leaseSeconds = 30): Promise<number> {
  return tx.$executeRawUnsafe(
    `WITH owed AS (
       SELECT id, org_id, run_id FROM approvals
       WHERE notify_state IN ('post', 'update') AND updated_at < now() - interval '10 seconds'
         AND (notify_attempted_at IS NULL OR notify_attempted_at < now() - make_interval(secs => $2))
         AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.topic = 'approval.notify' AND o.sent_at IS NULL
                         AND o.payload->>'approvalId' = approvals.id)
       ORDER BY updated_at LIMIT $1
     )
     INSERT INTO outbox (org_id, run_id, topic, payload)
     SELECT org_id, run_id, 'approval.notify', jsonb_build_object('orgId', org_id, 'approvalId', id) FROM owed`,
    limit,
    leaseSeconds,
  );
}

/**
 * Slack was reconnected: the pending approvals whose post failed on this connection (a revoked token) are owed their
 * post again, each with a timeline row and a wake-up for the notifier, in one statement. Returns how many.
 */
export async function approvalsRenotifyFailed(tx: Tx, orgId: string, connectionName: string, actor: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH owed AS (
      UPDATE approvals SET notify_state = CASE WHEN slack_message IS NULL THEN 'post' ELSE 'update' END,
                           notify_error = NULL, notify_attempted_at = NULL, updated_at = now()
      WHERE org_id = ${orgId} AND notify_state = 'failed' AND status = 'pending' AND slack->>'connection' = ${connectionName}
      RETURNING id, org_id, run_id, step_id, node_id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'approval.notify', jsonb_build_object('orgId', org_id, 'approvalId', id) FROM owed
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, node_id, type, worker, data)
      SELECT org_id, run_id, step_id, node_id, 'approval.notify_resumed', ${actor},
             jsonb_build_object('approvalId', id, 'reason', 'Slack was reconnected')
      FROM owed
    )
    SELECT count(*)::int AS n FROM owed`;
  return rows[0]?.n ?? 0;
}

/**
 * Erasure: the approvals of an erased contact's runs lose their title and content (what the reviewer was shown). A
 * message already in Slack is owed an update (revision bumped, a wake-up for the notifier in the same statement), so
 * Slack's copy is replaced by the erased text too. The digest stays: it reveals nothing and closed decisions cite it.
 */
export async function approvalsErase(tx: Tx, orgId: string, runIds: string[]): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH scrubbed AS (
      UPDATE approvals SET title = 'Erased contact', content = '(erased)', email_draft = NULL, revision = revision + 1, updated_at = now(),
                           notify_state = CASE WHEN slack_message IS NULL THEN notify_state ELSE 'update' END,
                           notify_error = NULL, notify_attempted_at = NULL
      WHERE org_id = ${orgId} AND run_id = ANY(${runIds}::text[])
      RETURNING id, org_id, run_id, slack_message IS NOT NULL AS posted
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'approval.notify', jsonb_build_object('orgId', org_id, 'approvalId', id) FROM scrubbed WHERE posted
    )
    SELECT count(*)::int AS n FROM scrubbed`;
  return rows[0]?.n ?? 0;
}

/** A version migration's rename: the run's approvals of one node follow its steps to the new id. */
export function approvalsRenameNode(tx: Tx, orgId: string, runId: string, fromNodeId: string, toNodeId: string): Promise<number> {
  return tx.$executeRaw`UPDATE approvals SET node_id = ${toNodeId} WHERE org_id = ${orgId} AND run_id = ${runId} AND node_id = ${fromNodeId}`;
}

/** A run moved to another step by a version migration: its pending approvals are cancelled (decided by no one). */
export function approvalsCancelPendingForMigration(tx: Tx, orgId: string, runId: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE approvals SET status = 'cancelled', decided_via = 'run', decided_by_name = 'a version migration', decided_at = now(),
                         revision = revision + 1
    WHERE org_id = ${orgId} AND run_id = ${runId} AND status = 'pending'`;
}

/** An approval decided before it was ever posted: nothing to ask anyone, the notifier is done with it. */
export function approvalsNotifyDoneIfUnposted(db: Db | Tx, orgId: string, approvalId: string): Promise<number> {
  return db.$executeRaw`
    UPDATE approvals SET notify_state = 'done', notify_attempted_at = NULL
    WHERE org_id = ${orgId} AND id = ${approvalId} AND slack_message IS NULL AND status <> 'pending'`;
}
