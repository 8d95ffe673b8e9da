import { mergeSamples } from "./declared-fields";
import { flowOf, type FlowGraph } from "./flow";
import { kindOf } from "./registry";
import { declaredSample, keptContactKeys, type TriggerConfig } from "./trigger";

/** A value a template at some node may use: `{{path}}`, with words and, where known, an example. */
export interface Variable {
  path: string;
  label: string;
  group: "Payload" | "Contact" | "Run" | "Earlier steps";
  example?: string;
}

const contact: Variable[] = [
  { path: "contact.email", label: "Contact's email", group: "Contact" },
  { path: "contact.name", label: "Contact's name", group: "Contact" },
  { path: "contact.company", label: "Contact's company", group: "Contact" },
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

/** The trigger's config in a graph being edited (unparsed: its fields may be half typed), or null. */
function triggerConfigOf(graph: FlowGraph): Partial<TriggerConfig> | null {
  const nodes: unknown = graph?.nodes;
  const node = Array.isArray(nodes) ? (nodes as { kind?: string; config?: unknown }[]).find((n) => n?.kind === "trigger") : undefined;
  const config = node?.config;
  return config !== null && typeof config === "object" ? (config as Partial<TriggerConfig>) : null;
}

/** The declared fields of a graph's trigger that are well formed enough to offer (a half-typed row is left out). */
function usableFields(c: Partial<TriggerConfig> | null): NonNullable<TriggerConfig["fields"]> {
  if (!Array.isArray(c?.fields)) return [];
  return c.fields.filter((f) => f && typeof f.name === "string" && /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(f.name));
}

/**
 * The payload a graph's steps can count on before any delivery: the trigger's declared fields (their examples) and
 * the sample typed in, with a real delivery's payload (`delivered`, the automation's sample) over them.
 */
export function sampleOf(graph: FlowGraph, delivered: unknown): unknown {
  const c = triggerConfigOf(graph);
  const sample = c ? declaredSample({ fields: usableFields(c), sample: c.sample }) : null;
  return delivered === null || delivered === undefined ? sample : mergeSamples(sample ?? {}, delivered);
}

/**
 * What exists at `nodeId`: the trigger's payload (its declared fields and typed sample, and what a delivery's sample
 * adds), the contact (with the attributes the trigger keeps), the run, and the outputs of the steps that run on every
 * path to it (a step only one branch runs may not have run: it is left out, as Publish would refuse it).
 */
export function variablesAt(graph: FlowGraph, nodeId: string, sample: unknown): Variable[] {
  const c = triggerConfigOf(graph);
  const fields = usableFields(c);
  const vars: Variable[] = payloadPaths(sampleOf(graph, sample)).map((p) => ({ path: p.path, label: p.path.slice("input.".length), group: "Payload", example: p.example }));
  const kept = keptContactKeys({ fields });
  for (const v of contact) {
    const declared = kept.find((k) => `contact.${k.key}` === v.path);
    vars.push(declared?.example ? { ...v, example: declared.example } : v);
  }
  for (const k of kept) {
    if (contact.some((v) => v.path === `contact.${k.key}`)) continue;
    vars.push({ path: `contact.${k.key}`, label: `Contact's ${k.label}`, group: "Contact", ...(k.example ? { example: k.example } : {}) });
  }
  vars.push({ path: "run.id", label: "Run id", group: "Run" });
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
