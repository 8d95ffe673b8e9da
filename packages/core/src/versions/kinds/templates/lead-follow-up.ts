import { z } from "zod";
import { approversSchema } from "../approval";
import { contactFields, mailAnswer, mailField, pickConnection, senderAnswer, senderField } from "./questions";
import { defineTemplate, layOut } from "./template";

/**
 * The product's own story: a lead's form arrives by webhook, the follow-up is drafted by a model at 09:00 on the
 * next weekday in the lead's zone, the CRM is updated, a person approves the exact email (in Slack too), it is sent,
 * and the reply (or its absence) decides the end.
 */
const answers = z.object({
  mail: mailAnswer,
  sender: senderAnswer,
  model: pickConnection("the AI model that drafts the email"),
  crm: pickConnection("the CRM to update"),
  approvers: approversSchema,
  slack: z.string().trim().max(100).optional(),
  slackChannel: z
    .string()
    .trim()
    .regex(/^[CG][A-Z0-9]{2,30}$/, "A channel id starts with C, such as C0123456 (in Slack: the channel's details)")
    .optional(),
}).refine((a) => !a.slackChannel || a.slack, { message: "Pick the Slack connection above to post in a channel", path: ["slackChannel"] });

export const leadFollowUp = defineTemplate({
  id: "lead-follow-up",
  name: "Lead follow-up",
  purpose: "Answer every new lead the next working morning with an email a model drafts and a person approves.",
  steps: [
    "A lead's form arrives by webhook",
    "Wait until 09:00 on the next weekday in the lead's time zone",
    "Draft the email with an AI model",
    "Update the lead in the CRM",
    "Ask a person to approve the email (in Slack too)",
    "Send it",
    "Wait up to 3 days for a reply: note a reply in the CRM, or end",
  ],
  note: "Starts when your form tool posts a lead (email, name, time zone, question) to the automation's webhook address. A rejected email is not sent.",
  suggestedName: "Lead follow-up",
  fields: [
    mailField,
    senderField,
    { name: "model", label: "Draft with", help: "The AI model connection that writes the first draft.", required: true, widget: { type: "connection", kind: "model" } },
    { name: "crm", label: "CRM to update", help: "The lead is created or updated there, matched by email.", required: true, widget: { type: "connection", kind: "crm" } },
    { name: "approvers", label: "Who approves each email", help: "Members by name, or everyone with a role. Owners may always decide.", required: true, widget: { type: "approvers" } },
    {
      name: "slack",
      label: "Ask in Slack through",
      help: "Optional: the approvers also get Approve and Reject buttons in Slack. None: they decide in Holdfast's approvals inbox.",
      widget: { type: "connection", kind: "slack" },
    },
    {
      name: "slackChannel",
      label: "Slack channel",
      help: "Optional: a channel id (C…) to post in. Empty: each approver's own Slack user, as linked in Settings → Slack links.",
      widget: { type: "text", placeholder: "C0123456" },
    },
  ],
  answers,
  defaults: { approvers: { users: [], role: "approver" } },
  graph: (a) =>
    layOut(
      [
        [{ id: "trigger", kind: "trigger", name: "A lead arrives" }],
        [{ id: "wait", kind: "wait", name: "Next weekday 09:00" }],
        [{ id: "draft", kind: "model_draft", name: "Draft the follow-up" }],
        [{ id: "crm", kind: "crm_upsert", name: "Update the lead in the CRM" }],
        [{ id: "approval", kind: "approval", name: "Approve the email" }],
        [
          { id: "send", kind: "send_email", name: "Send the follow-up" },
          { id: "not_sent", kind: "end", name: "Not sent" },
        ],
        [{ id: "reply", kind: "wait_for_reply", name: "Wait for a reply" }],
        [
          { id: "crm_reply", kind: "crm_upsert", name: "Note the reply in the CRM" },
          { id: "no_reply", kind: "end", name: "No reply" },
        ],
        [{ id: "done", kind: "end", name: "Done" }],
      ],
      {
        trigger: { fields: [...contactFields, { name: "question", type: "text", example: "the annual plan", role: "other" }] },
        wait: { rule: { kind: "next_weekday", at: "09:00" } },
        draft: {
          connection: a.model,
          prompt: `Write a short, friendly follow-up email to {{contact.name}} ({{contact.email}}), who asked about {{input.question}}. Answer in plain text, without a subject line, and sign it as ${a.sender}.`,
        },
        crm: { connection: a.crm, fields: { email: "{{contact.email}}", name: "{{contact.name}}", question: "{{input.question}}", follow_up: "drafted" } },
        approval: {
          approvers: a.approvers,
          title: "Send this follow-up to {{contact.email}}?",
          email: "send",
          ...(a.slack ? { slack: a.slackChannel ? { connection: a.slack, to: "channel", channel: a.slackChannel } : { connection: a.slack, to: "approvers" } } : {}),
        },
        send: { connection: a.mail, subject: "About {{input.question}}", text: "{{steps.draft.output.text}}" },
        reply: { replyTo: "send", timeoutSeconds: 3 * 86_400 },
        crm_reply: { connection: a.crm, fields: { email: "{{contact.email}}", follow_up: "replied", last_reply: "{{steps.reply.output.reply.text}}" } },
      },
      [
        { from: "trigger", to: "wait" },
        { from: "wait", to: "draft" },
        { from: "draft", to: "crm" },
        { from: "crm", to: "approval" },
        { from: "approval", to: "send", label: "approved" },
        { from: "approval", to: "not_sent", label: "rejected" },
        { from: "send", to: "reply" },
        { from: "reply", to: "crm_reply", label: "reply" },
        { from: "reply", to: "no_reply", label: "timeout" },
        { from: "crm_reply", to: "done" },
      ],
    ),
});
