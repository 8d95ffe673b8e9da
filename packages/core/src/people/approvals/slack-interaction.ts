import type { Db } from "@holdfast/db";
import { z } from "zod";
import { InvalidPayloadError } from "../../base/errors";
import { guardedFetch } from "../../providers/net/fetch";
import { parseJsonBounded } from "../../base/bodies";
import { approvalsGet } from "../../store/sql/approvals";
import { connectionsSlackOfTeam } from "../../store/sql/connections";
import { databaseNowMs } from "../../store/sql/database";
import { type DecisionResult, decideApproval } from "./decide";
import { slackConnectionConfig } from "../../versions/connection-kinds/slack";
import { approveActionId, rejectActionId, slackNoteText } from "./slack-blocks";
import { verifyButtonToken } from "./token";

/**
 * Slack's interactivity requests (a button pressed on an approval message). In order, each refusal before the
 * decision changes nothing at all:
 * 1. the signature (Bolt's verifySlackRequest over the exact bytes) and the timestamp, within 5 minutes of the
 *    database's clock in either direction (Bolt only refuses old ones);
 * 2. the payload's shape (zod);
 * 3. the button's token: our signature, its purpose, its expiry (database clock), the action it was issued for;
 * 4. the token is bound to the message it came on: the token's approval (of this run and step, in an
 *    organisation whose Slack connection is this workspace) stored that message, or, in the moment after the post,
 *    posts to Slack and has not stored its message yet;
 * then the decision itself (decideApproval: permission now, first decision wins, deadline, run, digest).
 */
export const slackToleranceSeconds = 300;

const blockActions = z.object({
  type: z.literal("block_actions"),
  team: z.object({ id: z.string().min(1).max(50) }).passthrough(),
  user: z.object({ id: z.string().min(1).max(50), name: z.string().max(200).optional() }).passthrough(),
  container: z.object({ type: z.literal("message"), channel_id: z.string().min(1).max(50), message_ts: z.string().min(1).max(50) }).passthrough(),
  actions: z.array(z.object({ action_id: z.string().max(255), value: z.string().max(2000).optional() }).passthrough()).min(1),
  response_url: z.string().url().optional(),
});

export interface SlackRequest {
  body: string;
  signature: string | null;
  timestamp: string | null;
}

export interface SlackReply {
  status: number;
  body: { ok: boolean; error?: string; message: string; decision?: DecisionResult };
  /** An ephemeral note for the person who pressed (posted to the request's response_url, if it is Slack's). */
  ephemeral?: { url: string; text: string };
}

const refuse = (status: number, error: string, message: string): SlackReply => ({ status, body: { ok: false, error, message } });

export async function handleSlackInteraction(db: Db, req: SlackRequest, signingSecret: string): Promise<SlackReply> {
  if (!signingSecret) return refuse(500, "not_configured", "SLACK_SIGNING_SECRET is not set");
  if (!req.signature || !req.timestamp) return refuse(401, "missing_signature", "x-slack-signature and x-slack-request-timestamp are required");
  if (!/^\d{1,12}$/.test(req.timestamp)) return refuse(401, "bad_timestamp", "x-slack-request-timestamp is not a Unix time");
  const nowMs = await databaseNowMs(db);
  const skew = Math.abs(nowMs / 1000 - Number(req.timestamp));
  if (skew > slackToleranceSeconds) return refuse(401, "stale_request", `the request's timestamp is ${Math.round(skew)} s from now (at most ${slackToleranceSeconds})`);
  const { verifySlackRequest } = await import("@slack/bolt");
  try {
    verifySlackRequest({
      signingSecret,
      body: req.body,
      headers: { "x-slack-signature": req.signature, "x-slack-request-timestamp": Number(req.timestamp) },
      nowMilliseconds: nowMs,
    });
  } catch {
    return refuse(401, "bad_signature", "the request's signature does not match");
  }

  let json: unknown;
  try {
    json = parseJsonBounded(new URLSearchParams(req.body).get("payload") ?? "");
  } catch (error) {
    return refuse(400, "bad_payload", error instanceof InvalidPayloadError && error.code === "invalid_payload" ? error.message : "the body has no JSON payload field");
  }
  if ((json as { type?: unknown })?.type !== "block_actions") return { status: 200, body: { ok: true, message: "ignored: not a button press" } };
  const parsed = blockActions.safeParse(json);
  if (!parsed.success) return refuse(400, "bad_payload", parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  const p = parsed.data;
  const action = p.actions.find((a) => a.action_id === approveActionId || a.action_id === rejectActionId);
  if (!action?.value) return { status: 200, body: { ok: true, message: "ignored: not an approval button" } };

  const check = verifyButtonToken(action.value, Math.floor(nowMs / 1000));
  if (!check.ok) {
    return withNote(refuse(403, `token_${check.reason}`, check.reason === "expired" ? "this button has expired" : "this button's token is not valid"), p.response_url, db, p.team.id);
  }
  const t = check.claims;
  if ((action.action_id === approveActionId) !== (t.x === "approved")) return refuse(403, "token_mismatch", "this token was issued for the other button");

  const orgIds = await connectionsSlackOfTeam(db, p.team.id);
  if (!orgIds.some((o) => o.orgId === t.o)) return refuse(403, "token_wrong_workspace", "this button does not belong to this workspace");
  // One read of the token's approval: its stored message must be the one clicked. Slack shows a post before its
  // poster hears where it is, so an approval that posts to Slack and has not stored its message yet accepts the
  // click too (two reads, by message and then by id, raced with the storing commit: 9 of 5,188 soak clicks).
  const approval = await approvalsGet(db, t.o, t.a);
  const stored = approval?.slackMessage;
  const ownMessage = stored ? stored.channel === p.container.channel_id && stored.ts === p.container.message_ts : approval?.slack != null;
  if (!approval || !ownMessage || approval.stepId !== t.s || approval.runId !== t.r) {
    return refuse(403, "token_not_for_this_message", "this button's token belongs to another approval step");
  }

  const decision = await decideApproval(db, {
    orgId: t.o,
    approvalId: t.a,
    decision: t.x,
    digest: t.d,
    via: "slack",
    actor: { slackUserId: p.user.id },
  });
  const reply: SlackReply = decision.ok
    ? { status: 200, body: { ok: true, message: `${decision.status} by ${decision.by}`, decision } }
    : { status: 200, body: { ok: false, error: decision.refusal.reason, message: decision.refusal.message, decision } };
  return decision.ok ? reply : withNote(reply, p.response_url, db, p.team.id);
}

/** Adds the ephemeral note, when the response_url is Slack's (or the workspace's configured API host, in tests). */
async function withNote(reply: SlackReply, responseUrl: string | undefined, db: Db, teamId: string): Promise<SlackReply> {
  if (!responseUrl) return reply;
  const url = new URL(responseUrl);
  let allowed = url.protocol === "https:" && url.hostname === "hooks.slack.com";
  if (!allowed) {
    const configs = await connectionsSlackOfTeam(db, teamId);
    allowed = configs.some((c) => {
      const parsed = slackConnectionConfig.safeParse(c.config);
      return parsed.success && new URL(parsed.data.apiUrl).origin === url.origin;
    });
  }
  return allowed ? { ...reply, ephemeral: { url: responseUrl, text: slackNoteText(reply.body) } } : reply;
}

/**
 * Posts the ephemeral note (best effort: the decision, or the refusal, is already what it is), through the egress
 * guard: the URL came in a request, checked against Slack's host or the workspace's configured API URL.
 */
export async function postEphemeral(note: { url: string; text: string }): Promise<void> {
  await guardedFetch(note.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ response_type: "ephemeral", replace_original: false, text: note.text }),
    signal: AbortSignal.timeout(5_000),
  }).catch(() => undefined);
}
