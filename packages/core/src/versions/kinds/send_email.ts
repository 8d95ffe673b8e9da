import { z } from "zod";
import { defineStepKind } from "./kind";

const email = z.email();

/**
 * An email through the organisation's SMTP connection. `to`, `subject`, `text` and `html` are templates over the
 * run's input, its contact and earlier steps' outputs (`{{contact.email}}`, `{{steps.draft.output.text}}`); the
 * HTML body is escaped. Consent and the suppression list are checked when the step runs, not when the run starts.
 */
export const sendEmailConfig = z
  .object({
    /** The name of an SMTP connection of the organisation (Settings -> Connections). */
    connection: z.string().min(1).max(100),
    to: z.string().min(1).max(500).default("{{contact.email}}"),
    subject: z.string().min(1).max(1_000),
    text: z.string().max(100_000).optional(),
    html: z.string().max(200_000).optional(),
    /** true: only contacts whose consent is "granted" are written to; otherwise anyone not withdrawn or suppressed. */
    requireConsent: z.boolean().default(false),
    maxAttempts: z.number().int().min(1).max(20).optional(),
    /**
     * The saved email the subject and bodies were copied from (the editor's "Use a saved email"), for display only:
     * the step sends its own copy, so a saved email changed or deleted later never changes a version.
     */
    savedEmail: z.object({ id: z.string().min(1).max(64), name: z.string().min(1).max(100) }).strict().optional(),
  })
  .strict()
  .refine((c) => c.text !== undefined || c.html !== undefined, { message: "an email needs a text or an html body", path: ["text"] });
export type SendEmailConfig = z.infer<typeof sendEmailConfig>;

export const sendEmail = defineStepKind({
  kind: "send_email",
  label: "Send email",
  icon: "✉",
  description: "Sends one email through an SMTP connection; never twice for one run.",
  group: "Actions",
  inline: false,
  lane: "io",
  effect: true,
  waits: false,
  config: sendEmailConfig,
  defaults: { connection: "", to: "{{contact.email}}", subject: "", text: "" },
  fields: [
    { name: "connection", label: "Send through", required: true, widget: { type: "connection", kind: "smtp" } },
    { name: "to", label: "To", help: "An address or a variable such as {{contact.email}}.", required: true, widget: { type: "template" } },
    { name: "subject", label: "Subject", required: true, widget: { type: "template" } },
    { name: "text", label: "Message", help: "Plain text. Use variables for the drafted text or the contact's details.", widget: { type: "template", multiline: true } },
    { name: "html", label: "HTML message", help: "Optional; variables are escaped.", advanced: true, widget: { type: "template", multiline: true } },
    {
      name: "requireConsent",
      label: "Only contacts who gave consent",
      help: "On: only contacts whose consent is granted. Off: anyone who has not withdrawn it or been suppressed.",
      widget: { type: "boolean" },
    },
    { name: "maxAttempts", label: "Attempts before it fails", help: "Empty: the lane's policy.", advanced: true, widget: { type: "number", min: 1, max: 20 } },
  ],
  outputs: null,
  output: [
    { path: "messageId", label: "Message-ID" },
    { path: "to", label: "Recipient" },
    { path: "subject", label: "Subject (as sent)" },
    { path: "text", label: "Message (as sent)" },
  ],
  maxAttempts: (c) => c.maxAttempts,
  summary: (c) => `Email ${c.to === "{{contact.email}}" ? "the contact" : c.to}${c.subject ? `: "${c.subject}"` : ""}`,
  checks: (node) =>
    !node.config.to.includes("{{") && !email.safeParse(node.config.to.trim()).success
      ? [{ path: `node:${node.id}.config.to`, message: `"${node.config.to}" is neither an email address nor a template like {{contact.email}}` }]
      : [],
});
