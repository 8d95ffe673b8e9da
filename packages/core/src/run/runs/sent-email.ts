import { renderTemplate } from "../../base/templates/render";
import type { StoryEmail, StoryInput, StoryStep } from "./story-types";
import { rec, str } from "./values";

/**
 * The email the run sent (the latest send_email step that was not skipped), as the step recorded it when the server
 * took it (providers/effects/send-email.ts: from, to, Reply-To, the rendered subject and bodies, the Message-ID). Runs sent
 * before the record existed have only the Message-ID and recipient: their subject and body are reconstructed from the
 * step's templates with the run's input, the contact as stored now and the earlier steps' outputs, and say so. An
 * erased contact's email shows nothing of what was sent.
 */
export function sentEmail(input: StoryInput): StoryEmail | null {
  const step = input.steps.filter((s) => s.kind === "send_email" && s.status === "done" && rec(s.output).skipped !== true).at(-1);
  if (!step) return null;
  const out = rec(step.output);
  const base = { nodeId: step.nodeId, sentAt: step.settledAt, messageId: str(out.messageId), from: str(out.from), replyTo: str(out.replyTo) };
  if (out.erased === true) {
    return { ...base, source: "erased", to: "", subject: "", body: "", html: null };
  }
  const subject = str(out.subject);
  if (subject !== null) {
    const text = str(out.text);
    const html = str(out.html);
    return { ...base, source: "recorded", to: str(out.to) ?? "", subject, body: text ?? html ?? "", html };
  }
  return { ...base, source: "reconstructed", ...reconstructed(input, step, out) };
}

/** An older run's email, rendered again from the node's templates (as the connector rendered them at send time). */
function reconstructed(input: StoryInput, step: StoryStep, out: Record<string, unknown>): Pick<StoryEmail, "to" | "subject" | "body" | "html"> {
  const config = rec(input.graph?.nodes.find((n) => n.id === step.nodeId)?.config);
  const steps: Record<string, { output: unknown }> = {};
  for (const s of [...input.steps].sort((a, b) => a.iteration - b.iteration)) if (s.status === "done" && s.createdAt <= step.createdAt) steps[s.nodeId] = { output: s.output };
  const contact = input.contact
    ? { id: input.contact.id ?? null, email: input.contact.email, time_zone: input.contact.timeZone, consent: input.contact.consent ?? null }
    : null;
  const context = { input: input.run.input ?? null, contact, steps, run: { id: input.run.id } };
  // A template that no longer renders (the contact was erased) shows as written.
  const render = (template: unknown, mode: "text" | "html") => {
    if (typeof template !== "string") return null;
    try {
      return renderTemplate(template, context, mode);
    } catch {
      return template;
    }
  };
  const html = render(config.html, "html");
  return {
    to: str(out.to) ?? input.contact?.email ?? "",
    subject: render(config.subject, "text") ?? "",
    body: render(config.text, "text") ?? html ?? "",
    html,
  };
}
