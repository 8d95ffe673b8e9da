import { z } from "zod";
import { defineConnectionKind } from "./kind";

const port = "must be a whole number between 1 and 65535";

/** An SMTP connection's non-secret settings (connections.config); the password is the encrypted secret. */
export const smtpConnectionConfig = z
  .object({
    host: z.string().trim().min(1, "is required").max(253, "is too long for a server name"),
    port: z.number().int(port).min(1, port).max(65_535, port).default(587),
    /** implicit: TLS from the first byte (465); starttls: upgrade required; none: plain (local relays, tests). */
    tls: z.enum(["implicit", "starttls", "none"]).default("starttls"),
    user: z.string().min(1, "is required").max(320, "is too long").optional(),
    from: z
      .string()
      .trim()
      .min(1, "is required")
      .max(320, "is too long")
      .refine((v) => /@[^@\s>]+/.test(v), 'must be an email address, e.g. "Sam at Acme <sam@acme.com>"'),
    /**
     * The provider (or the relay in front of it) drops a second message with a Message-ID it has already accepted,
     * so an uncertain send may be repeated with the same Message-ID. false: an uncertain send is parked for review.
     */
    dedupesMessageId: z.boolean().default(false),
    timeoutMs: z.number().int("must be a whole number of milliseconds").min(1_000, "must be at least 1000 (1 second)").max(120_000, "must be at most 120000 (2 minutes)").default(30_000),
  })
  .strict();
export type SmtpConnectionConfig = z.infer<typeof smtpConnectionConfig>;

export const smtpKind = defineConnectionKind({
  kind: "smtp",
  label: "Email (SMTP)",
  description: "Sends email from your mailbox through your provider's SMTP server (Google Workspace, Microsoft 365, Postmark, SES ...).",
  config: smtpConnectionConfig,
  defaults: { host: "", port: 587, tls: "starttls", from: "", dedupesMessageId: false, timeoutMs: 30_000 },
  fields: [
    { name: "host", label: "Server", required: true, help: "Your provider's SMTP server, e.g. smtp.gmail.com.", widget: { type: "text", format: "host", placeholder: "smtp.example.com" } },
    { name: "port", label: "Port", required: true, help: "587 for most providers; 465 when the provider says SSL/TLS.", widget: { type: "number", min: 1, max: 65_535, step: 1 } },
    {
      name: "tls",
      label: "Security",
      required: true,
      widget: {
        type: "select",
        options: [
          { value: "starttls", label: "STARTTLS (usually port 587)" },
          { value: "implicit", label: "TLS from the start (usually port 465)" },
          { value: "none", label: "None (a relay on your own network only)" },
        ],
      },
    },
    { name: "user", label: "User name", help: "Usually the mailbox's address. Leave empty if the server needs no login.", widget: { type: "text", placeholder: "sam@acme.com" } },
    { name: "from", label: "From address", required: true, help: 'Who the email is from, e.g. "Sam at Acme <sam@acme.com>". Replies come back to it.', widget: { type: "text", placeholder: "Sam at Acme <sam@acme.com>" } },
    {
      name: "dedupesMessageId",
      label: "Provider drops repeated messages",
      help: "Only if your provider documents that it drops a second message with the same Message-ID: then a send whose outcome is unknown is repeated instead of held for review.",
      advanced: true,
      widget: { type: "boolean" },
    },
    { name: "timeoutMs", label: "Timeout (milliseconds)", help: "How long to wait for the server at each step of the conversation.", advanced: true, widget: { type: "number", min: 1_000, max: 120_000, step: 1_000, unit: "ms" } },
  ],
  secret: { label: "Password", help: "The password (or app password) of the user name above. Needed when a user name is set.", required: false },
  needsSecret: (c) => (c.user !== undefined ? "when a user name is set" : null),
  summary: (c) => `${c.host}:${c.port}${c.user ? ` as ${c.user}` : ""}, from ${c.from}`,
});
