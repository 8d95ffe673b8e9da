import type { Db } from "@holdfast/db";
import { approvalOfButton, type BlockActions, blockActions, refuse, type SlackReply, type SlackRequest, withNote } from "./slack-reply";
import { InvalidPayloadError } from "../../base/errors";
import { parseJsonBounded } from "../../base/bodies";
import { databaseNowMs } from "../../store/sql/database";
import { decideApproval } from "./decide";
import { approveActionId, editActionId, rejectActionId } from "./slack-blocks";
import { handleEditSubmission, openEditModal } from "./slack-edit";
import { verifyButtonToken } from "./token";

/**
 * Slack's interactivity requests: a button pressed on an approval message (Approve / Reject here, Edit and the edit
 * modal's view_submission in slack-edit.ts). In order, each refusal before the decision changes nothing at all:
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

export async function handleSlackInteraction(db: Db, req: SlackRequest, signingSecret: string): Promise<SlackReply> {
  const verified = await verifySlackSignature(db, req, signingSecret);
  if ("status" in verified) return verified;
  const { nowMs } = verified;
  let json: unknown;
  try {
    json = parseJsonBounded(new URLSearchParams(req.body).get("payload") ?? "");
  } catch (error) {
    return refuse(400, "bad_payload", error instanceof InvalidPayloadError && error.code === "invalid_payload" ? error.message : "the body has no JSON payload field");
  }
  const type = (json as { type?: unknown })?.type;
  // The edit modal's Save and approve (slack-edit.ts).
  if (type === "view_submission") return handleEditSubmission(db, json, nowMs);
  if (type !== "block_actions") return { status: 200, body: { ok: true, message: "ignored: not a button press" } };
  const parsed = blockActions.safeParse(json);
  if (!parsed.success) return refuse(400, "bad_payload", parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  const edit = parsed.data.actions.find((a) => a.action_id === editActionId);
  if (edit?.value) return openEditModal(db, parsed.data, edit.value, nowMs);
  return handleButton(db, parsed.data, nowMs);
}

/** The signature (Bolt's verifySlackRequest over the exact bytes) and the timestamp, within 5 minutes of the database's clock. */
async function verifySlackSignature(db: Db, req: SlackRequest, signingSecret: string): Promise<SlackReply | { nowMs: number }> {
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
  return { nowMs };
}

/** Approve / Reject pressed: the button's token, its binding to the message, then the decision. */
async function handleButton(db: Db, p: BlockActions, nowMs: number): Promise<SlackReply> {
  const action = p.actions.find((a) => a.action_id === approveActionId || a.action_id === rejectActionId);
  if (!action?.value) return { status: 200, body: { ok: true, message: "ignored: not an approval button" } };

  const check = verifyButtonToken(action.value, Math.floor(nowMs / 1000));
  if (!check.ok) {
    return withNote(refuse(403, `token_${check.reason}`, check.reason === "expired" ? "this button has expired" : "this button's token is not valid"), p.response_url, db, p.team.id);
  }
  const t = check.claims;
  if ((action.action_id === approveActionId) !== (t.x === "approved")) return refuse(403, "token_mismatch", "this token was issued for the other button");

  const bound = await approvalOfButton(db, p, t);
  if (!("approval" in bound)) return bound;

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


export { postEphemeral, type SlackReply, type SlackRequest } from "./slack-reply";
