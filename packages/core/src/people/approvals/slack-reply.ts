import type { Db } from "@holdfast/db";
import { z } from "zod";
import { guardedFetch } from "../../providers/net/fetch";
import { type ApprovalRow, approvalsGet } from "../../store/sql/approvals";
import { connectionsSlackOfTeam } from "../../store/sql/connections";
import { slackConnectionConfig } from "../../versions/connection-kinds/slack";
import type { DecisionResult } from "./decide";
import type { EditResult } from "./edit";
import { slackNoteText } from "./slack-blocks";

/** What Slack's interactivity requests share: the block_actions shape, the reply, refusals and ephemeral notes. */
export type BlockActions = z.infer<typeof blockActions>;
export const blockActions = z.object({
  type: z.literal("block_actions"),
  team: z.object({ id: z.string().min(1).max(50) }).passthrough(),
  user: z.object({ id: z.string().min(1).max(50), name: z.string().max(200).optional() }).passthrough(),
  container: z.object({ type: z.literal("message"), channel_id: z.string().min(1).max(50), message_ts: z.string().min(1).max(50) }).passthrough(),
  actions: z.array(z.object({ action_id: z.string().max(255), value: z.string().max(2000).optional() }).passthrough()).min(1),
  response_url: z.string().url().optional(),
  trigger_id: z.string().min(1).max(200).optional(),
});

export interface SlackRequest {
  body: string;
  signature: string | null;
  timestamp: string | null;
}

export interface SlackReply {
  status: number;
  body: { ok: boolean; error?: string; message: string; decision?: DecisionResult | EditResult };
  /** An ephemeral note for the person who pressed (posted to the request's response_url, if it is Slack's). */
  ephemeral?: { url: string; text: string };
  /** A modal's submission: the answer Slack reads ({response_action: "errors" | "clear"}); null: an empty 200. */
  view?: Record<string, unknown> | null;
}

export const refuse = (status: number, error: string, message: string): SlackReply => ({ status, body: { ok: false, error, message } });

/**
 * The token's approval, when the button pressed is on its message: the workspace is the token organisation's, and the
 * approval's stored message is the one clicked. Slack shows a post before its poster hears where it is, so an
 * approval that posts to Slack and has not stored its message yet accepts the click too (two reads, by message and
 * then by id, raced with the storing commit: 9 of 5,188 soak clicks).
 */
export async function approvalOfButton(db: Db, p: BlockActions, t: { o: string; a: string; s: string; r: string }): Promise<SlackReply | { approval: ApprovalRow }> {
  const orgIds = await connectionsSlackOfTeam(db, p.team.id);
  if (!orgIds.some((o) => o.orgId === t.o)) return refuse(403, "token_wrong_workspace", "this button does not belong to this workspace");
  const approval = await approvalsGet(db, t.o, t.a);
  const stored = approval?.slackMessage;
  const ownMessage = stored ? stored.channel === p.container.channel_id && stored.ts === p.container.message_ts : approval?.slack != null;
  if (!approval || !ownMessage || approval.stepId !== t.s || approval.runId !== t.r) {
    return refuse(403, "token_not_for_this_message", "this button's token belongs to another approval step");
  }
  return { approval };
}

/** Adds the ephemeral note, when the response_url is Slack's (or the workspace's configured API host, in tests). */
export async function withNote(reply: SlackReply, responseUrl: string | undefined, db: Db, teamId: string): Promise<SlackReply> {
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
