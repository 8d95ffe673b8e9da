import Handlebars from "handlebars";

/**
 * Node config templates (`{{contact.first_name}}`, `{{steps.draft_email.output.text}}`), rendered by Handlebars in
 * strict mode: a reference that does not resolve throws instead of rendering empty. HTML bodies are escaped; plain
 * text (subject, text body, addresses) is not. Handlebars' raw output (`{{{x}}}`, `{{& x}}`) is refused at publish
 * (versions/checks.ts, through `unescapedOutputs`) and, in a version published before that, rendered escaped all
 * the same: nothing from a run reaches an HTML body unescaped. Templates compile once per process.
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
  try {
    let fn = compiled.get(cacheKey);
    if (!fn) {
      fn = hb.compile(escapingEverything(hb.parse(template)), { strict: true, noEscape: mode === "text", knownHelpersOnly: true });
      if (compiled.size > 5_000) compiled.clear();
      compiled.set(cacheKey, fn);
    }
    return fn(context);
  } catch (error) {
    throw new TemplateError(template, missingWords(template, context) ?? `the template cannot be filled in: ${(error as Error).message.split("\n")[0]}`);
  }
}

/** The template with every output escaped, whatever braces it was written with. */
function escapingEverything(ast: hbs.AST.Program): hbs.AST.Program {
  visitNodes(ast, (n) => {
    if (n.type === "MustacheStatement") (n as hbs.AST.MustacheStatement).escaped = true;
  });
  return ast;
}

/**
 * The outputs a template writes without escaping (`{{{input.name}}}`, `{{& input.name}}`), as written and as they
 * should be written instead; [] when it does not parse (templateProblems says so).
 */
export function unescapedOutputs(template: string): { written: string; instead: string }[] {
  let ast: hbs.AST.Program;
  try {
    ast = hb.parse(template);
  } catch {
    return [];
  }
  const lineStarts = [0];
  for (let i = 0; i < template.length; i++) if (template[i] === "\n") lineStarts.push(i + 1);
  const offset = (p: hbs.AST.Position) => (lineStarts[p.line - 1] ?? 0) + p.column;
  const out: { written: string; instead: string }[] = [];
  visitNodes(ast, (n) => {
    const m = n as hbs.AST.MustacheStatement;
    if (m.type !== "MustacheStatement" || m.escaped) return;
    const written = template.slice(offset(m.loc.start), offset(m.loc.end));
    const instead = written.startsWith("{{&") || written.startsWith("{{~&")
      ? written.replace(/^\{\{(~?)&\s*/, "{{$1")
      : written.replace(/^\{\{(~?)\{/, "{{$1").replace(/\}(~?)\}\}$/, "$1}}");
    out.push({ written, instead });
  });
  return out;
}

function visitNodes(node: unknown, each: (n: { type: string }) => void): void {
  if (!node || typeof node !== "object") return;
  if (typeof (node as { type?: unknown }).type === "string") each(node as { type: string });
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const v of value) visitNodes(v, each);
    else if (value && typeof value === "object") visitNodes(value, each);
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
  visitNodes(ast, (node) => {
    const n = node as { type?: string; parts?: string[]; original?: string; data?: boolean };
    if (n.type === "PathExpression" && !n.data) {
      const [root, second] = n.parts ?? [];
      if (root !== undefined && !roots.has(root)) problems.push(`"${n.original}": references start with input., contact., steps. or run.`);
      else if (root === "steps" && second !== undefined && !nodeIds.has(second)) problems.push(`"${n.original}": no node "${second}" in this graph`);
    }
  });
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
  visitNodes(ast, (node) => {
    const n = node as { type?: string; parts?: string[]; original?: string; data?: boolean };
    if (n.type === "PathExpression" && !n.data && n.parts?.length) refs.push({ original: n.original ?? n.parts.join("."), parts: n.parts });
  });
  return refs;
}
