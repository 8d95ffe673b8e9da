import { z } from "zod";
import { defineStepKind } from "./kind";
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

/**
 * Asks a person to approve exact content (`content`, a template over earlier steps' outputs such as a drafted email)
 * before the run goes on. The decision binds the content's digest. Posted to Slack when `slack` is set, and always
 * listed in the approvals inbox. Two outgoing edges: "approved" and "rejected".
 */
export const approvalConfig = z
  .object({
    approvers: approversSchema,
    title: z.string().min(1).max(300),
    content: z.string().min(1).max(50_000),
    deadlineSeconds: z.number().int().min(1).max(30 * 86_400),
    onDeadline: onDeadlineSchema.default({ action: "stop" }),
    /** A Slack connection of the organisation and the channel (C...) or user (U...) to post to. */
    slack: z.object({ connection: z.string().min(1).max(100), channel: z.string().min(1).max(100) }).strict().optional(),
  })
  .strict();
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
      name: "content",
      label: "What they approve",
      help: "The exact content the decision binds (such as the drafted email). If it changes, the approval no longer counts.",
      required: true,
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
    { name: "slack.channel", label: "Slack channel or person", help: "A channel id (C…) or a member id (U…).", widget: { type: "text", placeholder: "C0123456" } },
  ],
  outputs: ["approved", "rejected"],
  outputWords: { approved: "When approved, go to", rejected: "When rejected, go to" },
  output: [
    { path: "reply.decision", label: "Decision" },
    { path: "reply.byName", label: "Decided by" },
  ],
  summary: (c) => `Ask ${approversWords(c.approvers)} within ${durationWords(c.deadlineSeconds)}${c.slack ? " (Slack)" : ""}`,
});
