import Handlebars from "handlebars";

/**
 * Node config templates (`{{contact.first_name}}`, `{{steps.draft_email.output.text}}`), rendered by Handlebars in
 * strict mode: a reference that does not resolve throws instead of rendering empty. HTML bodies are escaped; plain
 * text (subject, text body, addresses) is not. Templates compile once per process.
 */
export interface TemplateContext {
  input: unknown;
  contact: Record<string, unknown> | null;
  steps: Record<string, { output: unknown }>;
  run: { id: string };
}

export class TemplateError extends Error {
  constructor(
    readonly template: string,
    message: string,
  ) {
    super(message);
  }
}

const roots = new Set(["input", "contact", "steps", "run"]);
const compiled = new Map<string, HandlebarsTemplateDelegate>();
const hb = Handlebars.create();

export function renderTemplate(template: string, context: TemplateContext, mode: "html" | "text"): string {
  const cacheKey = `${mode}\u0000${template}`;
  let fn = compiled.get(cacheKey);
  if (!fn) {
    fn = hb.compile(template, { strict: true, noEscape: mode === "text", knownHelpersOnly: true });
    if (compiled.size > 5_000) compiled.clear();
    compiled.set(cacheKey, fn);
  }
  try {
    return fn(context);
  } catch (error) {
    throw new TemplateError(template, missingWords(template, context) ?? `the template cannot be filled in: ${(error as Error).message.split("\n")[0]}`);
  }
}

/** Names the first reference with no value in this run, in words: "{{steps.reply.output.outcome}} has no value in this run". */
function missingWords(template: string, context: TemplateContext): string | null {
  for (const ref of templateReferences(template)) {
    let value: unknown = context;
    for (const [i, part] of ref.parts.entries()) {
      if (value === null || typeof value !== "object" || !(part in value)) {
        const known = ref.parts.slice(0, i).join(".");
        return `{{${ref.original}}} has no value in this run${known ? ` (${known} has no "${part}")` : ""}`;
      }
      value = (value as Record<string, unknown>)[part];
    }
  }
  return null;
}

/**
 * What can be known before a run: the template parses, every reference starts at a known root, and every
 * `steps.<id>` names a node of the graph. Returns problems as messages.
 */
export function templateProblems(template: string, nodeIds: Set<string>): string[] {
  let ast: hbs.AST.Program;
  try {
    ast = hb.parse(template);
  } catch (error) {
    return [`template does not parse: ${(error as Error).message.split("\n")[0]}`];
  }
  const problems: string[] = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== "object") return;
    const n = node as { type?: string; parts?: string[]; original?: string; data?: boolean };
    if (n.type === "PathExpression" && !n.data) {
      const [root, second] = n.parts ?? [];
      if (root !== undefined && !roots.has(root)) problems.push(`"${n.original}": references start with input., contact., steps. or run.`);
      else if (root === "steps" && second !== undefined && !nodeIds.has(second)) problems.push(`"${n.original}": no node "${second}" in this graph`);
    }
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === "object") visit(value);
    }
  };
  visit(ast);
  return problems;
}

/** The context paths a template reads, as parts (`steps.draft.output.text` -> ["steps", "draft", "output", "text"]); [] when it does not parse. */
export function templateReferences(template: string): { original: string; parts: string[] }[] {
  let ast: hbs.AST.Program;
  try {
    ast = hb.parse(template);
  } catch {
    return [];
  }
  const refs: { original: string; parts: string[] }[] = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== "object") return;
    const n = node as { type?: string; parts?: string[]; original?: string; data?: boolean };
    if (n.type === "PathExpression" && !n.data && n.parts?.length) refs.push({ original: n.original ?? n.parts.join("."), parts: n.parts });
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === "object") visit(value);
    }
  };
  visit(ast);
  return refs;
}
