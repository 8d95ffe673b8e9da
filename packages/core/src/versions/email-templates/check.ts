import { templateProblems, templateReferences, unescapedOutputs } from "../../base/templates/render";

/**
 * What a saved email's subject and bodies use and what is wrong with them, known before any automation uses it. Pure.
 * An error stops the save (a step filled from it could never send): a `{{` that does not close, a variable that does
 * not start with contact., input., steps. or run., raw output. A variable that reads a step (`{{steps.draft...}}`)
 * is allowed, with a note: it needs a step of that name before the send step that uses the saved email, which the
 * automation's publish checks confirm.
 */

export type EmailField = "subject" | "text" | "html";

export const emailFieldWords: Record<EmailField, string> = { subject: "The subject", text: "The message", html: "The HTML message" };

export interface EmailVariable {
  /** As written between the braces: `contact.name`, `steps.draft.output.text`. */
  path: string;
  /** The step id it reads, for `steps.<id>...`; null otherwise. */
  needsStep: string | null;
}

export interface EmailTemplateCheck {
  variables: EmailVariable[];
  errors: { field: EmailField; message: string }[];
  /** "Needs a step named "draft" (for {{steps.draft.output.text}})": allowed, said once per step. */
  notes: string[];
}

/** Checks a saved email's subject, message and optional HTML message. */
export function checkEmailTemplate(c: { subject: string; text: string; html: string | null }): EmailTemplateCheck {
  const errors: EmailTemplateCheck["errors"] = [];
  const variables = new Map<string, EmailVariable>();
  for (const field of ["subject", "text", "html"] as const) {
    const template = c[field];
    if (template === null) continue;
    const fieldErrors = fieldProblems(field, template);
    errors.push(...fieldErrors);
    if (fieldErrors.length > 0) continue;
    for (const ref of templateReferences(template)) {
      const [root, step] = ref.parts;
      if (!variables.has(ref.original)) variables.set(ref.original, { path: ref.original, needsStep: root === "steps" && step !== undefined ? step : null });
    }
  }
  const notes = new Map<string, string>();
  for (const v of variables.values()) {
    if (v.needsStep !== null && !notes.has(v.needsStep)) notes.set(v.needsStep, `Needs a step named "${v.needsStep}" before the send step (for {{${v.path}}}).`);
  }
  return { variables: [...variables.values()], errors, notes: [...notes.values()] };
}

function fieldProblems(field: EmailField, template: string): EmailTemplateCheck["errors"] {
  const words = emailFieldWords[field];
  // No graph here: every step id is "known", so only the shape and the roots are checked.
  const anyStep = { has: () => true } as unknown as Set<string>;
  const problems = templateProblems(template, anyStep);
  const parse = problems.find((p) => p.startsWith("template does not parse"));
  if (parse) return [{ field, message: parseWords(words, template, parse) }];
  const out = problems.map((p) => ({ field, message: `${words}: ${p.replace(/^"([^"]*)": references start with/, "{{$1}} is not a variable: variables start with")} (for example {{contact.name}}).` }));
  for (const { written, instead } of unescapedOutputs(template)) {
    out.push({ field, message: `${words}: ${written} would insert text without escaping it; write ${instead}.` });
  }
  return out;
}

/** A template that does not parse, in words: where, and how a variable is written. */
function parseWords(words: string, template: string, problem: string): string {
  const line = /on line (\d+)/.exec(problem)?.[1];
  const lines = template.split("\n").length;
  const where = line && lines > 1 ? ` (line ${line})` : "";
  const opens = (template.match(/\{\{/g) ?? []).length;
  const closes = (template.match(/\}\}/g) ?? []).length;
  const what = opens > closes ? 'has a "{{" that is never closed with "}}"' : "has braces that do not make a variable";
  return `${words}${where} ${what}. Write each variable as {{contact.name}}, or remove the stray braces.`;
}
