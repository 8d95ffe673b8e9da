import { z } from "zod";
import type { Approvers as ApproversRow, Decision as DecisionRow, OnDeadline as OnDeadlineRow } from "../../base/types/approvals";
import type { Same } from "../../base/types/same";
import { nodeId } from "./ids";
import { type CheckGraph, defineStepKind, type GraphProblem } from "./kind";
import { durationWords, listWords } from "./words";

/** Who may decide: named users (by email) and/or everyone holding a role (an owner may always decide). */
export const approversSchema = z
  .object({
    users: z.array(z.string().email().max(320).transform((e) => e.toLowerCase())).max(50).default([]),
    role: z.enum(["owner", "editor", "approver"]).optional(),
  })
  .strict()
  .refine((a) => a.users.length > 0 || a.role !== undefined, { message: "name at least one approver or a role" });
export type Approvers = z.infer<typeof approversSchema>;

export const decisionSchema = z.enum(["approved", "rejected"]);
export type Decision = z.infer<typeof decisionSchema>;

/** What happens when an approval's deadline passes with no decision. */
export const onDeadlineSchema = z.discriminatedUnion("action", [
  /** Ask other people, with a deadline of their own; when that passes too, `afterwards` applies. */
  z
    .object({
      action: z.literal("escalate"),
      to: approversSchema,
      deadlineSeconds: z.number().int().min(1).max(30 * 86_400),
      afterwards: z.union([decisionSchema, z.literal("stop")]).default("stop"),
    })
    .strict(),
  /** Take this decision in everyone's name ("decided by the deadline"). */
  z.object({ action: z.literal("default"), decision: decisionSchema }).strict(),
  /** Stop the run with a visible reason. */
  z.object({ action: z.literal("stop") }).strict(),
]);
export type OnDeadline = z.infer<typeof onDeadlineSchema>;

// The table modules store these settings typed by base/types/approvals.ts: a schema change must change those types too.
const _approversRow: Same<Approvers, ApproversRow> = true;
const _decisionRow: Same<Decision, DecisionRow> = true;
const _onDeadlineRow: Same<OnDeadline, OnDeadlineRow> = true;

/**
 * Asks a person to approve exact content (`content`, a template over earlier steps' outputs such as a drafted email)
 * before the run goes on. The decision binds the content's digest. Posted to Slack when `slack` is set, and always
 * listed in the approvals inbox. Two outgoing edges: "approved" and "rejected".
 *
 * `email` names the Send email step whose email this approval approves. The approver is then shown that email as it
 * would be sent (recipient, subject, text, HTML), rendered when the approval is asked, after `content` if any; and
 * that step sends exactly that email: when it renders anything else at send time, it parks with the reason and sends
 * nothing (people/approvals/email.ts, run/connectors/send-email.ts). Publish checks: the step is a Send email step on the
 * approved path, every way to it passes the approval, and its templates use no step that runs after the approval.
 */
export const approvalConfig = z
  .object({
    approvers: approversSchema,
    title: z.string().min(1).max(300),
    content: z.string().max(50_000).default(""),
    email: nodeId.optional(),
    deadlineSeconds: z.number().int().min(1).max(30 * 86_400),
    onDeadline: onDeadlineSchema.default({ action: "stop" }),
    /**
     * A Slack connection of the organisation and where to post: `to: "approvers"` sends it to the approvers' own
     * Slack users (their links in Settings -> Slack links), `to: "channel"` to `channel` (a channel id C... or a
     * member id U..., as configs written before the choice existed hold: without `to`, a channel means "channel").
     */
    slack: z
      .preprocess(
        (v) => (v && typeof v === "object" && !("to" in v) ? { ...v, to: "channel" in v && v.channel ? "channel" : "approvers" } : v),
        z
          .object({ connection: z.string().min(1).max(100), to: z.enum(["approvers", "channel"]), channel: z.string().min(1).max(100).optional() })
          .strict()
          .refine((s) => s.to === "approvers" || s.channel !== undefined, { message: "name the channel (C…) to post to, or send it to the approvers", path: ["channel"] }),
      )
      .optional(),
  })
  .strict()
  .refine((c) => c.content.trim() !== "" || c.email !== undefined, {
    message: "say what they approve: the content, or the email step it approves",
    path: ["content"],
  });
export type ApprovalConfig = z.infer<typeof approvalConfig>;

export function approversWords(a: Pick<Approvers, "users" | "role">): string {
  const who = [...a.users, ...(a.role ? [`any ${a.role}`] : [])];
  return who.length ? listWords(who) : "nobody yet";
}

export const approval = defineStepKind({
  kind: "approval",
  label: "Ask for approval",
  icon: "✔",
  description: "Asks a person to approve the exact content (in Slack and the inbox) before the run goes on.",
  group: "Waits",
  inline: false,
  lane: "human",
  effect: false,
  waits: true,
  config: approvalConfig,
  defaults: { approvers: { users: [], role: "approver" }, title: "Send this email?", content: "", deadlineSeconds: 86_400, onDeadline: { action: "stop" } },
  fields: [
    { name: "approvers", label: "Who may approve", help: "Members by email, or everyone with a role. Owners may always decide.", required: true, widget: { type: "approvers" } },
    { name: "title", label: "Question", required: true, widget: { type: "template" } },
    {
      name: "email",
      label: "Email it approves",
      help:
        "Optional: a Send email step after this one. They see that email exactly as it will be sent, and it is sent only as approved: if it would go out different in any way, it is held with the reason instead.",
      widget: { type: "step", kinds: ["send_email"] },
    },
    {
      name: "content",
      label: "What they approve",
      help: "The exact content the decision binds (such as the drafted email); with an email chosen above, a note shown before it. If it changes, the approval no longer counts.",
      widget: { type: "template", multiline: true },
    },
    { name: "deadlineSeconds", label: "Decide within", required: true, widget: { type: "duration", min: 1, max: 30 * 86_400 } },
    {
      name: "onDeadline.action",
      label: "When nobody decides in time",
      widget: {
        type: "select",
        options: [
          { value: "stop", label: "Stop the run", help: "The run fails, saying the deadline passed." },
          { value: "default", label: "Decide by default", help: "Take a decision in everyone's name." },
          { value: "escalate", label: "Ask someone else", help: "Other approvers get their own deadline." },
        ],
      },
    },
    {
      name: "onDeadline.decision",
      label: "Default decision",
      widget: { type: "select", options: [{ value: "approved", label: "Approve" }, { value: "rejected", label: "Reject" }] },
      showIf: { field: "onDeadline.action", in: ["default"] },
    },
    { name: "onDeadline.to", label: "Ask instead", widget: { type: "approvers" }, showIf: { field: "onDeadline.action", in: ["escalate"] } },
    { name: "onDeadline.deadlineSeconds", label: "They decide within", widget: { type: "duration", min: 1, max: 30 * 86_400 }, showIf: { field: "onDeadline.action", in: ["escalate"] } },
    {
      name: "onDeadline.afterwards",
      label: "If they do not decide either",
      widget: { type: "select", options: [{ value: "stop", label: "Stop the run" }, { value: "approved", label: "Approve" }, { value: "rejected", label: "Reject" }] },
      showIf: { field: "onDeadline.action", in: ["escalate"] },
    },
    { name: "slack.connection", label: "Post to Slack through", help: "Optional: the approvers also get buttons in Slack.", widget: { type: "connection", kind: "slack" } },
    {
      name: "slack.to",
      label: "Send it in Slack to",
      widget: {
        type: "select",
        options: [
          { value: "approvers", label: "The approvers", help: "Each approver's own Slack user, as linked in Settings → Slack links (one group message)." },
          { value: "channel", label: "A channel", help: "Everyone in the channel sees it; only approvers can decide." },
        ],
      },
    },
    {
      name: "slack.channel",
      label: "Slack channel",
      help: "Only when sending to a channel: its id (C…), from the channel's details in Slack. An older step may hold a member id (U…) here: it keeps working.",
      widget: { type: "text", placeholder: "C0123456" },
    },
  ],
  outputs: ["approved", "rejected"],
  outputWords: { approved: "When approved, go to", rejected: "When rejected, go to" },
  output: [
    { path: "reply.decision", label: "Decision" },
    { path: "reply.byName", label: "Decided by" },
  ],
  summary: (c) => `Ask ${approversWords(c.approvers)} within ${durationWords(c.deadlineSeconds)}${c.email ? ` to approve the email of ${c.email}` : ""}${c.slack ? " (Slack)" : ""}`,
  checks: (node, graph) => (node.config.email ? approvedEmailProblems(node.id, node.config.email, graph) : []),
});

/** Nodes reachable from `starts` along `edges`, never entering `wall` (the approval). */
function reach(starts: string[], next: (id: string) => string[], wall: string): Set<string> {
  const seen = new Set<string>();
  const todo = starts.filter((s) => s !== wall);
  for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
    if (seen.has(id)) continue;
    seen.add(id);
    for (const n of next(id)) if (n !== wall && !seen.has(n)) todo.push(n);
  }
  return seen;
}

/**
 * The email an approval approves must be a Send email step that only the approved edge leads to, and its templates
 * must render when the approval is asked: no step between the approval and the send (nor the approval itself) may
 * feed them, since the approver could not see what it will say.
 */
function approvedEmailProblems(approvalId: string, emailId: string, graph: CheckGraph): GraphProblem[] {
  const path = `node:${approvalId}.config.email`;
  const send = graph.nodes.find((n) => n.id === emailId);
  if (send?.kind !== "send_email") return [{ path, message: `"${emailId}" is not a Send email step of this automation` }];
  const out = (id: string) => graph.edges.filter((e) => e.from === id).map((e) => e.to);
  const into = (id: string) => graph.edges.filter((e) => e.to === id).map((e) => e.from);
  const fromApproval = (approved: boolean) => graph.edges.filter((e) => e.from === approvalId && (e.label === "approved") === approved).map((e) => e.to);
  const after = reach(fromApproval(true), out, approvalId);
  if (!after.has(emailId)) return [{ path, message: `"${emailId}" does not come after this approval's "approved" edge` }];
  const triggers = graph.nodes.filter((n) => n.kind === "trigger").map((n) => n.id);
  if (reach([...triggers, ...fromApproval(false)], out, approvalId).has(emailId)) {
    return [{ path, message: `"${emailId}" can be reached without this approval: every way to the email must pass its "approved" edge` }];
  }
  const between = new Set([...reach([emailId], into, approvalId)].filter((id) => id !== emailId && after.has(id)));
  between.add(approvalId);
  const used = [...JSON.stringify(send.config ?? {}).matchAll(/steps\.([a-z][a-z0-9_]*)/g)].map((m) => m[1] as string);
  const late = [...new Set(used.filter((id) => between.has(id)))];
  return late.length
    ? [{ path, message: `"${emailId}" uses ${late.map((id) => `{{steps.${id}...}}`).join(", ")}, which this approval cannot show: it runs after the approval is asked` }]
    : [];
}
