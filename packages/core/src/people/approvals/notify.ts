import { type Db, inTx } from "@holdfast/db";
import type { ApprovalNotify } from "../../base/catalog";
import { slackConnectionConfig } from "../../versions/connection-kinds/slack";
import { decryptSecret } from "../../providers/connections/secrets";
import { slackClient, type WebClient } from "../../providers/connections/slack-client";
import { crashpoint } from "../../base/crash";
import type { Logger } from "../../base/log";
import { egressRefusalOf } from "../../providers/net/egress";
import { traceAttr, traceProviderCall } from "../../base/tracing";
import {
  type ApprovalRow,
  approvalsNotified,
  approvalsNotifyDoneIfUnposted,
  approvalsNotifyFailed,
  approvalsTakeNotify,
  type SlackMessage,
} from "../../store/sql/approvals";
import { connectionsByName, connectionsMarkNeedsReconnect } from "../../store/sql/connections";
import { databaseNow } from "../../store/sql/database";
import { runEventsInsert } from "../../store/sql/run-events";
import { approvalMessage } from "./slack-blocks";
import { issueButtonToken } from "./token";
import { issueEditToken } from "./edit-token";
import { fitsSlackModal } from "./slack-modal";

export { slackClient };


/** Slack's answers for a token that no longer works: the app was removed, the token revoked, the workspace closed. */
const revokedErrors = new Set(["invalid_auth", "token_revoked", "account_inactive", "not_authed", "token_expired"]);

export type NotifyResult = "posted" | "updated" | "skipped" | "failed" | "retry";

export interface NotifyOptions {
  log: Logger;
  /** The web app's public address, for the run link in the message. */
  publicUrl: string | null;
  worker: string;
  /** How long one attempt holds the notification before another may take it (default 30 s). */
  leaseSeconds?: number;
}

/**
 * Brings an approval's Slack message up to date with its row: posts it (with Approve / Reject buttons) when it was
 * never posted, else updates it to show the outcome. The row is taken for a lease first (30 s). A post is not repeatable (Slack
 * has no idempotency key), so an attempt that follows an uncertain one looks the message up by its metadata (the
 * approval id) before posting: a message is posted at most once. Errors Slack will repeat (a missing channel, a
 * revoked token) mark the notification failed, visibly; others leave it for the sweeper to wake again.
 */
export async function notifyApproval(db: Db, msg: ApprovalNotify, opts: NotifyOptions): Promise<NotifyResult> {
  let result: NotifyResult = "skipped";
  // A change while we posted leaves the row owing an update: go round again (bounded).
  for (let round = 0; round < 3; round++) {
    const a = await inTx(db, (tx) => approvalsTakeNotify(tx, msg.orgId, msg.approvalId, opts.leaseSeconds ?? 30));
    if (!a?.slack) return result;
    const outcome = await notifyOnce(db, a, opts, performance.now());
    if (outcome.result !== "posted" && outcome.result !== "updated") return outcome.result;
    result = result === "posted" ? "posted" : outcome.result;
    if (outcome.state !== "update") return result;
  }
  return result;
}

async function notifyOnce(
  db: Db,
  a: ApprovalRow & { uncertain: boolean },
  opts: NotifyOptions,
  /** When the lease was taken, by the process's monotonic clock (it keeps counting while the process is frozen). */
  takenAt: number,
): Promise<{ result: NotifyResult; state?: string }> {
  const target = a.slack as NonNullable<ApprovalRow["slack"]>;
  const fail = (error: string, final: boolean) => notifyFailed(db, a, opts, error, final);
  const connection = await connectionsByName(db, a.orgId, target.connection);
  if (connection?.kind !== "slack" || !connection.secret) return fail(`no Slack connection named "${target.connection}"`, true);
  const config = slackConnectionConfig.safeParse(connection.config);
  if (!config.success) return fail(`Slack connection "${target.connection}" is misconfigured`, true);
  // At most 6 calls (open, 3 history pages, post or update, and one spare), each capped at lease/8: the attempt
  // ends inside its lease, so no other attempt can take the row while this one may still post.
  const client = await slackClient(decryptSecret(connection.secret, a.orgId, connection.id), config.data.apiUrl, Math.min(10_000, ((opts.leaseSeconds ?? 30) * 1000) / 8));
  const body = await messageBody(db, a, opts);

  let message: SlackMessage | null = a.slackMessage;
  let posted = false;
  // Each Slack call is a span in the run's trace (no step attempt is running here).
  const attributes = { [traceAttr.org]: a.orgId, [traceAttr.step]: a.stepId, [traceAttr.node]: a.nodeId, "holdfast.approval_id": a.id };
  const slack = <T>(method: string, call: () => Promise<T>) => traceProviderCall({ provider: "slack", operation: method, runId: a.runId, attributes }, call);
  try {
    if (!message && a.uncertain) message = await slack("conversations.history", () => findPosted(client, target.channel, a.id, a.createdAt));
    if (message) {
      const { channel, ts } = message;
      await slack("chat.update", () => client.chat.update({ channel, ts, text: body.text, blocks: body.blocks as never }));
    } else {
      if (a.status !== "pending") {
        // Decided before it was ever posted: nothing to ask anyone.
        await approvalsNotifyDoneIfUnposted(db, a.orgId, a.id);
        return { result: "skipped" };
      }
      // Half the lease gone before the post (the process was frozen or starved): another attempt may take the row
      // once it lapses and, finding no message, post it; posting now could make two. Leave it to that attempt (it
      // looks the message up first, so nothing is posted twice either way).
      if (performance.now() - takenAt > ((opts.leaseSeconds ?? 30) * 1000) / 2) {
        opts.log.warn({ orgId: a.orgId, runId: a.runId, approvalId: a.id }, "slack post skipped: half its lease was gone before it; the next attempt posts it");
        return { result: "retry" };
      }
      // Several approvers' Slack users (U1,U2): their group conversation is opened first (the same one each time).
      const channel = target.channel.includes(",")
        ? ((await slack("conversations.open", () => client.conversations.open({ users: target.channel }))).channel?.id ?? target.channel)
        : target.channel;
      const res = await slack("chat.postMessage", () => client.chat.postMessage({ channel, text: body.text, blocks: body.blocks as never, metadata: body.metadata }));
      if (!res.channel || !res.ts) return fail("Slack answered a post without channel and ts", false);
      message = { channel: res.channel, ts: res.ts };
      posted = true;
      crashpoint("notify.after_post");
    }
  } catch (error) {
    return notifyFailedWith(db, a, opts, connection.id, error);
  }
  return notifyRecorded(db, a, opts, message, posted);
}

/** The message as the approval's row says it now, with fresh Approve / Reject tokens while it is pending. */
async function messageBody(db: Db, a: ApprovalRow, opts: NotifyOptions): Promise<ReturnType<typeof approvalMessage>> {
  const now = await databaseNow(db);
  const token = (decision: "approved" | "rejected") =>
    issueButtonToken({ orgId: a.orgId, runId: a.runId, stepId: a.stepId, approvalId: a.id, decision, digest: a.digest }, a.deadlineAt, now);
  const ids = { orgId: a.orgId, runId: a.runId, stepId: a.stepId, approvalId: a.id, digest: a.digest };
  // An approval of an email whose draft fits Slack's inputs also gets an Edit button (its own token).
  const edit = fitsSlackModal(a.emailDraft) && !a.emailDigest?.revised ? issueEditToken(ids, a.deadlineAt, now) : undefined;
  return approvalMessage(a, a.status === "pending" ? { approve: token("approved"), reject: token("rejected"), edit } : null, {
    runUrl: opts.publicUrl ? `${opts.publicUrl.replace(/\/$/, "")}/runs/${a.runId}` : null,
  });
}

/** The notification failed: for good (`final`, on the timeline too) or for the sweeper to wake again. */
async function notifyFailed(db: Db, a: ApprovalRow, opts: NotifyOptions, error: string, final: boolean): Promise<{ result: NotifyResult }> {
  await inTx(db, async (tx) => {
    await approvalsNotifyFailed(tx, a.orgId, a.id, error, final);
    if (final) {
      await runEventsInsert(tx, [
        { orgId: a.orgId, runId: a.runId, stepId: a.stepId, nodeId: a.nodeId, type: "approval.notify_failed", worker: opts.worker, data: { approvalId: a.id, error } },
      ]);
    }
  });
  opts.log.warn({ orgId: a.orgId, runId: a.runId, stepId: a.stepId, approvalId: a.id, error, final }, "slack notification failed");
  return { result: final ? ("failed" as const) : ("retry" as const) };
}

/** A Slack call threw: whether Slack will answer the same again decides if the failure is final. */
async function notifyFailedWith(db: Db, a: ApprovalRow, opts: NotifyOptions, connectionId: string, error: unknown): Promise<{ result: NotifyResult }> {
  // A Slack API URL the egress guard refuses stays refused: the notification fails visibly, once.
  const refused = egressRefusalOf(error);
  if (refused) return notifyFailed(db, a, opts, refused.message, true);
  const e = error as { code?: string; data?: { error?: string }; message?: string };
  const slackError = e.data?.error;
  if (slackError && revokedErrors.has(slackError)) {
    // The app was removed or its token revoked: every post on this connection would fail the same way. The
    // connection says so in Settings, the approval waits (still decidable in the inbox) and is posted again once
    // Slack is added again (people/slack/install.ts).
    const reason = `Slack refused the bot token (${slackError}): reconnect Slack with Add to Slack in Settings`;
    await inTx(db, (tx) => connectionsMarkNeedsReconnect(tx, a.orgId, connectionId, reason));
    return notifyFailed(db, a, opts, reason, true);
  }
  const final = e.code === "slack_webapi_platform_error" && slackError !== "ratelimited" && slackError !== "internal_error" && slackError !== "fatal_error";
  return notifyFailed(db, a, opts, slackError ?? e.message ?? String(error), final);
}

/** The message is up to date: recorded on the row (which says if it owes another update) and on the timeline. */
async function notifyRecorded(db: Db, a: ApprovalRow, opts: NotifyOptions, found: SlackMessage, posted: boolean): Promise<{ result: NotifyResult; state?: string }> {
  const state = await inTx(db, async (tx) => {
    const s = await approvalsNotified(tx, a.orgId, a.id, found, a.revision);
    await runEventsInsert(tx, [
      {
        orgId: a.orgId,
        runId: a.runId,
        stepId: a.stepId,
        nodeId: a.nodeId,
        type: posted ? "approval.posted" : "approval.message_updated",
        worker: opts.worker,
        data: { approvalId: a.id, channel: found.channel, ts: found.ts, status: a.status },
      },
    ]);
    return s;
  });
  opts.log.info({ orgId: a.orgId, runId: a.runId, stepId: a.stepId, approvalId: a.id, channel: found.channel, posted }, "slack message up to date");
  return { result: posted ? "posted" : "updated", state };
}

/** The message an earlier, uncertain attempt may have posted: found by its metadata (the approval id). */
async function findPosted(client: WebClient, channel: string, approvalId: string, since: Date): Promise<SlackMessage | null> {
  let id = channel;
  if (/^[UW]/.test(channel)) {
    const opened = await client.conversations.open({ users: channel });
    id = opened.channel?.id ?? channel;
  }
  let cursor: string | undefined;
  for (let page = 0; page < 3; page++) {
    const res = await client.conversations.history({
      channel: id,
      oldest: String(Math.floor(since.getTime() / 1000) - 60),
      include_all_metadata: true,
      limit: 200,
      ...(cursor ? { cursor } : {}),
    });
    for (const m of res.messages ?? []) {
      const meta = (m as { metadata?: { event_type?: string; event_payload?: { approval_id?: string } } }).metadata;
      if (meta?.event_type === "holdfast_approval" && meta.event_payload?.approval_id === approvalId && m.ts) return { channel: id, ts: m.ts };
    }
    cursor = res.response_metadata?.next_cursor || undefined;
    if (!cursor) return null;
  }
  return null;
}
