import { flowOf, type FlowGraph } from "./flow";
import { kindOf } from "./registry";

/** A value a template at some node may use: `{{path}}`, with words and, where known, an example. */
export interface Variable {
  path: string;
  label: string;
  group: "Payload" | "Contact" | "Run" | "Earlier steps";
  example?: string;
}

const contact: Variable[] = [
  { path: "contact.email", label: "Contact's email", group: "Contact" },
  { path: "contact.time_zone", label: "Contact's time zone", group: "Contact" },
  { path: "contact.consent", label: "Contact's consent", group: "Contact" },
];

/** Every leaf of a sample payload as a dotted path (`input.company.name`), up to a depth and a count. */
export function payloadPaths(sample: unknown, prefix = "input", depth = 4, limit = 200): { path: string; example: string }[] {
  const out: { path: string; example: string }[] = [];
  const walk = (value: unknown, path: string, level: number) => {
    if (out.length >= limit) return;
    if (value !== null && typeof value === "object" && !Array.isArray(value) && level < depth) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (/^[A-Za-z0-9_-]+$/.test(k)) walk(v, `${path}.${k}`, level + 1);
      return;
    }
    const text = typeof value === "string" ? value : JSON.stringify(value);
    out.push({ path, example: text === undefined ? "" : text.length > 60 ? `${text.slice(0, 59)}…` : text });
  };
  walk(sample, prefix, 0);
  return out.filter((p) => p.path !== prefix);
}

/**
 * What exists at `nodeId`: the trigger's payload (from its sample), the contact, the run, and the outputs of the
 * steps that run on every path to it (a step only one branch runs may not have run: it is left out, as Publish
 * would refuse it).
 */
export function variablesAt(graph: FlowGraph, nodeId: string, sample: unknown): Variable[] {
  const vars: Variable[] = payloadPaths(sample).map((p) => ({ path: p.path, label: p.path.slice("input.".length), group: "Payload", example: p.example }));
  vars.push(...contact, { path: "run.id", label: "Run id", group: "Run" });
  const flow = flowOf(graph);
  const dominators = flow?.dominators.get(nodeId);
  for (const node of graph.nodes) {
    if (node.id === nodeId || !dominators?.has(node.id)) continue;
    const module = kindOf(node.kind);
    for (const o of module?.output ?? []) {
      vars.push({ path: `steps.${node.id}.output.${o.path}`, label: `${node.id}: ${o.label}`, group: "Earlier steps" });
    }
  }
  return vars;
}
