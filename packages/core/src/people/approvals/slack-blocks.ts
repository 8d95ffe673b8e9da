import { escapeMrkdwn } from "../slack/mrkdwn";
import type { ApprovalRow } from "../../store/sql/approvals";
import { describeOutcome, readBack, type Refusal } from "./judge";

/**
 * The Slack message of an approval, as a pure function of its row: the exact content under review, its deadline and
 * run, and either the Approve / Reject buttons (each carrying its own single-purpose token) or the outcome. Every
 * mrkdwn text (the top-level text too: it is the notification) escapes the title, content and names it carries
 * (people/slack/mrkdwn.ts); the header is plain_text and shows the title as typed.
 */
export const approveActionId = "holdfast.approval.approve";
export const rejectActionId = "holdfast.approval.reject";
/** Opens the "Edit before approving" modal (slack-edit.ts), on an approval of an email that fits Slack's inputs. */
export const editActionId = "holdfast.approval.edit";

/** Slack's limit for a section's text is 3000 characters; longer content says where to read it whole. */
const maxText = 2_800;

export interface SlackMessageBody {
  text: string;
  blocks: unknown[];
  metadata: { event_type: string; event_payload: Record<string, string> };
}

export function approvalMessage(
  a: Pick<ApprovalRow, "id" | "runId" | "title" | "content" | "deadlineAt" | "status" | "decidedByName" | "decidedAt" | "decidedVia" | "stage">,
  tokens: { approve: string; reject: string; edit?: string | undefined } | null,
  links: { runUrl: string | null },
): SlackMessageBody {
  // Escaped and quoted first, then fitted: Slack refuses a section over 3000 characters. Content that does not fit
  // whole gets no buttons: a decision binds the exact content, so it is taken in the inbox, where it is shown whole.
  const whole = quote(a.content);
  const fits = whole.length <= maxText;
  let shown = whole;
  if (!fits) {
    let n = Math.min(a.content.length, maxText);
    do shown = quote(a.content.slice(0, n)), (n = Math.floor(n * 0.9));
    while (shown.length > maxText - 100 && n > 0);
    shown = `${shown}\n_… too long for Slack: read it whole and decide in the approvals inbox._`;
  }
  const deadline = Math.floor(a.deadlineAt.getTime() / 1000);
  const blocks: unknown[] = [
    { type: "header", text: { type: "plain_text", text: a.title.slice(0, 150), emoji: false } },
    { type: "section", text: { type: "mrkdwn", text: shown } },
    {
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `Decide by <!date^${deadline}^{date_short_pretty} at {time}|${a.deadlineAt.toISOString()}>${a.stage > 1 ? " (escalated)" : ""}${links.runUrl ? ` · <${links.runUrl}|run ${a.runId}>` : ""}`,
        },
      ],
    },
  ];
  if (a.status === "pending" && tokens && fits) {
    blocks.push({
      type: "actions",
      block_id: `approval:${a.id}`,
      elements: [
        { type: "button", action_id: approveActionId, style: "primary", text: { type: "plain_text", text: "Approve" }, value: tokens.approve },
        { type: "button", action_id: rejectActionId, style: "danger", text: { type: "plain_text", text: "Reject" }, value: tokens.reject },
        ...(tokens.edit ? [{ type: "button", action_id: editActionId, text: { type: "plain_text", text: "Edit" }, value: tokens.edit }] : []),
      ],
    });
  } else if (a.status !== "pending") {
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: `*${outcomeLine(a)}*` }] });
  }
  return {
    text: a.status === "pending" ? `Approval needed: ${escapeMrkdwn(a.title)}` : `${escapeMrkdwn(a.title)}: ${outcomeLine(a)}`,
    blocks,
    metadata: { event_type: "holdfast_approval", event_payload: { approval_id: a.id } },
  };
}

/** The outcome in mrkdwn: its words escaped (they carry the decider's name), then the decision time as Slack's date token. */
function outcomeLine(a: Parameters<typeof describeOutcome>[0] & { decidedAt: Date | null }): string {
  const text = escapeMrkdwn(describeOutcome(a));
  if (!a.decidedAt) return capitalise(text);
  // Slack shows the time in each reader's own zone; the UTC text is the fallback.
  const unix = Math.floor(a.decidedAt.getTime() / 1000);
  return capitalise(text.replace(/ at \d\d:\d\d UTC on \d{4}-\d\d-\d\d$/, ` <!date^${unix}^{date_short_pretty} at {time}|${a.decidedAt.toISOString()}>`));
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const quote = (s: string) => escapeMrkdwn(s).split("\n").map((l) => `>${l}`).join("\n");

/** The ephemeral note to whoever pressed a refused button (Slack reads it as mrkdwn; it reads back names). */
export function slackNoteText(body: { message: string; decision?: { ok: boolean; refusal?: Refusal; approval?: unknown } | undefined }): string {
  const refusal = body.decision && !body.decision.ok ? body.decision.refusal : undefined;
  return escapeMrkdwn(refusal ? readBack(refusal) : `Not recorded: ${body.message}`);
}
