import type { Db } from "@holdfast/db";
import { z } from "zod";
import { decryptSecret } from "../../providers/connections/secrets";
import { slackClient } from "../../providers/connections/slack-client";
import { approvalsGet } from "../../store/sql/approvals";
import { connectionsByName, connectionsSlackOfTeam } from "../../store/sql/connections";
import { membershipsIdentityOfSlackUser } from "../../store/sql/memberships";
import { slackConnectionConfig } from "../../versions/connection-kinds/slack";
import { editApproval } from "./edit";
import { verifyEditToken } from "./edit-token";
import { mayDecide, readBack } from "./judge";
import { bodyBlock, editCallbackId, editModal, fitsSlackModal, subjectBlock } from "./slack-modal";
import { approvalOfButton, type BlockActions, refuse, type SlackReply, withNote } from "./slack-reply";

/**
 * "Edit" on an approval message, in two requests, each signed by Slack (slack-interaction.ts checked the signature):
 * 1. block_actions: the Edit button's token (edit-token.ts) is checked and bound to its message as Approve's is; a
 *    linked member who may decide it gets the modal, opened with views.open on the interaction's trigger_id through
 *    the approval's Slack connection (Bolt's client, whose fetch is the egress guard), its private_metadata the token.
 * 2. view_submission: the token again (signature, purpose, expiry by the database clock, its workspace), then
 *    editApproval as the Slack user (linked member, approver rules, the digest the modal showed) saves the edit and
 *    approves, in one transaction. Slack reads the answer: {response_action: "clear"}, or "errors" in words.
 */
export async function openEditModal(db: Db, p: BlockActions, value: string, nowMs: number): Promise<SlackReply> {
  const note = (status: number, error: string, message: string) => withNote(refuse(status, error, message), p.response_url, db, p.team.id);
  const check = verifyEditToken(value, Math.floor(nowMs / 1000));
  if (!check.ok) return note(403, `token_${check.reason}`, check.reason === "expired" ? "this button has expired" : "this button's token is not valid");
  const t = check.claims;
  const bound = await approvalOfButton(db, p, t);
  if (!("approval" in bound)) return bound;
  const a = bound.approval;
  if (!p.trigger_id) return refuse(400, "bad_payload", "trigger_id: Required");
  const member = await membershipsIdentityOfSlackUser(db, t.o, p.user.id);
  if (!member || !mayDecide(a.approvers, member)) return note(403, "not_permitted", "you may not edit this approval (link your Slack user in Settings, as an approver)");
  if (a.status !== "pending") return note(409, "already_decided", "this approval was already decided");
  if (a.digest !== t.d) return note(409, "content_changed", "the draft changed since this message was shown; read the new version");
  if (!fitsSlackModal(a.emailDraft) || !a.slack) return note(409, "not_editable", "this email cannot be edited in Slack: edit it in the approvals inbox");
  const connection = await connectionsByName(db, a.orgId, a.slack.connection);
  const config = slackConnectionConfig.safeParse(connection?.config);
  if (connection?.kind !== "slack" || !connection.secret || !config.success) return note(409, "no_connection", `no Slack connection named "${a.slack.connection}"`);
  // Slack's trigger_id lives 3 seconds: one call, short timeout.
  const client = await slackClient(decryptSecret(connection.secret, a.orgId, connection.id), config.data.apiUrl, 2_500);
  try {
    await client.views.open({ trigger_id: p.trigger_id, view: editModal(a.emailDraft, value) as never });
  } catch (error) {
    return note(502, "slack_error", `Slack did not open the edit form (${(error as Error).message}); edit it in the approvals inbox`);
  }
  return { status: 200, body: { ok: true, message: "edit form opened" } };
}

const input = z.object({ type: z.string().max(50).optional(), value: z.string().max(20_000).nullable().optional() }).passthrough();
const viewSubmission = z.object({
  type: z.literal("view_submission"),
  team: z.object({ id: z.string().min(1).max(50) }).passthrough(),
  user: z.object({ id: z.string().min(1).max(50) }).passthrough(),
  view: z
    .object({
      callback_id: z.string().max(255),
      private_metadata: z.string().max(3000),
      state: z.object({ values: z.record(z.string().max(255), z.record(z.string().max(255), input)) }).passthrough(),
    })
    .passthrough(),
});

/** The modal's answer: an error under the input it concerns (Slack shows it there), in words. */
const errors = (message: string, block = bodyBlock): SlackReply => ({
  status: 200,
  body: { ok: false, message },
  view: { response_action: "errors", errors: { [block]: message.slice(0, 500) } },
});

export async function handleEditSubmission(db: Db, json: unknown, nowMs: number): Promise<SlackReply> {
  const parsed = viewSubmission.safeParse(json);
  if (!parsed.success) return refuse(400, "bad_payload", parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  const { view, team, user } = parsed.data;
  if (view.callback_id !== editCallbackId) return { status: 200, body: { ok: true, message: "ignored: not an approval edit" }, view: null };
  const check = verifyEditToken(view.private_metadata, Math.floor(nowMs / 1000));
  if (!check.ok) {
    return errors(check.reason === "expired" ? "This edit form has expired: the approval's deadline passed. Nothing was saved." : "This edit form is not valid. Nothing was saved.");
  }
  const t = check.claims;
  const orgs = await connectionsSlackOfTeam(db, team.id);
  const approval = orgs.some((o) => o.orgId === t.o) ? await approvalsGet(db, t.o, t.a) : undefined;
  if (!approval || approval.stepId !== t.s || approval.runId !== t.r) return errors("This edit form does not belong to this workspace. Nothing was saved.");
  const subject = view.state.values[subjectBlock]?.[subjectBlock]?.value ?? "";
  const text = view.state.values[bodyBlock]?.[bodyBlock]?.value ?? "";
  const result = await editApproval(db, { orgId: t.o, approvalId: t.a, digest: t.d, subject, text, via: "slack", actor: { slackUserId: user.id }, approve: true });
  if (!result.ok) {
    const block = result.refusal.reason === "not_editable" && result.refusal.message.startsWith("the subject") ? subjectBlock : bodyBlock;
    return { ...errors(`${readBack(result.refusal)}.`, block), body: { ok: false, error: result.refusal.reason, message: result.refusal.message, decision: result } };
  }
  return { status: 200, body: { ok: true, message: `${result.status} by ${result.by}`, decision: result }, view: { response_action: "clear" } };
}
