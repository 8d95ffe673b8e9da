import { createHash } from "node:crypto";
import type { EmailDigest, EmailDraft } from "../../base/types/approvals";
import type { SendEmailConfig } from "../../versions/kinds/send_email";
import { renderTemplate, type TemplateContext } from "../../base/templates/render";

/**
 * An approval of an email (the approval's `email` names a send_email step): the approver is shown that step's email
 * as it would be sent, and the step sends only that email. Both sides render it here, with the same templates and
 * the same rules, so "what Sam saw" and "what goes out" are compared like for like.
 */

/** The parts of an email a person approves: the recipient, the subject and the bodies, rendered. */
export interface EmailParts {
  to: string;
  subject: string;
  text?: string;
  html?: string;
}

/** Renders a send_email step's templates (throws TemplateError): the one rendering the connector sends. */
export function renderEmail(config: Pick<SendEmailConfig, "to" | "subject" | "text" | "html">, context: TemplateContext): EmailParts {
  return {
    to: renderTemplate(config.to, context, "text").trim(),
    subject: renderTemplate(config.subject, context, "text"),
    ...(config.text !== undefined ? { text: renderTemplate(config.text, context, "text") } : {}),
    ...(config.html !== undefined ? { html: renderTemplate(config.html, context, "html") } : {}),
  };
}

/** The email as the approver reads it (inbox, Slack): the recipient, the subject, the text and the HTML source. */
export function emailReviewText(e: EmailParts): string {
  const lines = [`To: ${e.to}`, `Subject: ${e.subject}`];
  if (e.text !== undefined) lines.push("", e.text);
  if (e.html !== undefined) lines.push("", "HTML version:", e.html);
  return lines.join("\n");
}

const parts = ["to", "subject", "text", "html"] as const;
type Part = (typeof parts)[number];

/** What an approval keeps of the email it showed: its digests (approvals.email_digest) and parts (email_draft). */
export type { EmailDigest, EmailDraft };

export const draftOf = (e: EmailParts): EmailDraft => ({ to: e.to, subject: e.subject, text: e.text ?? null, html: e.html ?? null });
export const partsOf = (d: EmailDraft): EmailParts => ({
  to: d.to,
  subject: d.subject,
  ...(d.text !== null ? { text: d.text } : {}),
  ...(d.html !== null ? { html: d.html } : {}),
});

const sha = (v: unknown) => createHash("sha256").update(JSON.stringify(v)).digest("hex");

export function emailDigestOf(node: string, e: EmailParts): EmailDigest {
  return {
    node,
    all: sha(parts.map((p) => e[p] ?? null)),
    to: sha(e.to),
    subject: sha(e.subject),
    text: e.text === undefined ? null : sha(e.text),
    html: e.html === undefined ? null : sha(e.html),
  };
}

const partWords: Record<Part, string> = { to: "the recipient", subject: "the subject", text: "the text", html: "the HTML version" };

/** The parts of `e` that are not what `approved` digested, in words ("the subject", "the text"); [] when identical. */
export function emailChanges(approved: EmailDigest, e: EmailParts): string[] {
  const now = emailDigestOf(approved.node, e);
  if (now.all === approved.all) return [];
  return parts.filter((p) => now[p] !== approved[p]).map((p) => partWords[p]);
}
