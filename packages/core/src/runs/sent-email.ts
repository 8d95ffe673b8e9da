import { renderTemplate } from "../templates/render";
import { rec, type StoryEmail, type StoryInput, str } from "./story";

/**
 * The email the run sent (the latest send_email step that was not skipped): its subject and body rendered from the
 * step's templates with the run's input, the contact and the earlier steps' outputs, as the connector renders them.
 * A template that no longer renders (the contact was erased) shows as written.
 */
export function sentEmail(input: StoryInput): StoryEmail | null {
  const step = input.steps.filter((s) => s.kind === "send_email" && s.status === "done" && rec(s.output).skipped !== true).at(-1);
  if (!step) return null;
  const config = rec(input.graph?.nodes.find((n) => n.id === step.nodeId)?.config);
  const steps: Record<string, { output: unknown }> = {};
  for (const s of [...input.steps].sort((a, b) => a.iteration - b.iteration)) if (s.status === "done" && s.createdAt <= step.createdAt) steps[s.nodeId] = { output: s.output };
  const contact = input.contact
    ? { id: input.contact.id ?? null, email: input.contact.email, time_zone: input.contact.timeZone, consent: input.contact.consent ?? null }
    : null;
  const context = { input: input.run.input ?? null, contact, steps, run: { id: input.run.id } };
  const render = (template: unknown) => {
    if (typeof template !== "string") return null;
    try {
      return renderTemplate(template, context, "text");
    } catch {
      return template;
    }
  };
  return {
    nodeId: step.nodeId,
    to: str(rec(step.output).to) ?? input.contact?.email ?? "",
    subject: render(config.subject) ?? "",
    body: render(config.text) ?? render(config.html) ?? "",
    sentAt: step.settledAt,
  };
}
