import { leadFollowUp } from "./lead-follow-up";
import { reEngagement } from "./re-engagement";
import { friendlyIssue } from "../../forms/fields";
import type { AutomationTemplate, TemplateGraph } from "./template";
import { welcomeSeries } from "./welcome-series";

export { type AutomationTemplate, defineTemplate, type TemplateGraph, type TemplateNode } from "./template";

/** The gallery, in its order. */
export const automationTemplates: readonly AutomationTemplate[] = [leadFollowUp, welcomeSeries, reEngagement] as AutomationTemplate[];

export function templateOf(id: string): AutomationTemplate | undefined {
  return automationTemplates.find((t) => t.id === id);
}

/** An answer the template cannot do without, or one that is not right: the question's label and what to do. */
export interface AnswerProblem {
  field: string;
  label: string;
  message: string;
}

/**
 * The template's draft for these answers, or each missing or wrong answer named (by the question's label). The
 * messages are the answers' schema's own, else the forms' plain words (`friendlyIssue`).
 */
export function buildFromTemplate(template: AutomationTemplate, answers: unknown): { ok: true; graph: TemplateGraph } | { ok: false; problems: AnswerProblem[] } {
  const parsed = template.answers.safeParse(answers ?? {}, { error: friendlyIssue });
  if (parsed.success) return { ok: true, graph: template.graph(parsed.data) };
  const problems = parsed.error.issues.map((i) => {
    const field = template.fields.find((f) => f.name === String(i.path[0] ?? ""));
    return { field: field?.name ?? i.path.join("."), label: field?.label ?? i.path.join("."), message: i.message };
  });
  return { ok: false, problems };
}
