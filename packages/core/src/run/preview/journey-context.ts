import type { TemplateContact } from "../../base/templates/contact";
import { renderTemplate, type TemplateContext, TemplateError, templateReferences } from "../../base/templates/render";
import { type PreviewInstant, previewWait } from "../../decide/timers/preview";
import type { Graph } from "../../versions/graph";
import type { MissingValue, PreviewAssume, PreviewConnection, PreviewSample, StepPreview } from "./journey-types";

/**
 * What each step's preview reads (the walk so far: the sample's template context, the assumptions, the run's clock),
 * and the helpers that fill its templates in and name every reference the sample has no value for.
 */
export interface JourneyWalk {
  graph: Graph;
  sample: PreviewSample;
  /** When the run would start. */
  now: Date;
  assume: PreviewAssume;
  connections: PreviewConnection[];
  contact: TemplateContact | null;
  /** What templates see; each previewed step's output is added as the walk goes. */
  context: TemplateContext;
  /** The run's clock: each wait moves it on. */
  clock: Date;
}

/** A step's preview before its words and detail: its node, and the gaps found so far. */
export type StepDraft = Omit<StepPreview, "words" | "detail">;

/** A step's preview and the output the walk goes on with (a simulated settle). */
export interface Previewed {
  step: StepPreview;
  output: unknown;
}

export function nodeName(w: JourneyWalk, id: string): string {
  const n = w.graph.nodes.find((x) => x.id === id);
  return n?.name ?? id;
}

/** The organisation's connection of this name and kind, if there is one. */
export const connectionNamed = (w: JourneyWalk, name: string | undefined, kind: string) => w.connections.find((c) => c.name === name && c.kind === kind);

/** An instant `seconds` from the run's clock, as the wait preview shows instants (in the contact's zone, or UTC). */
export function instantAfter(w: JourneyWalk, seconds: number): PreviewInstant {
  const zone = w.contact?.time_zone ?? "UTC";
  return previewWait({ kind: "duration", seconds }, zone, w.clock, 1)[0] as PreviewInstant;
}

/** The walk's context with every template's missing references filled with their own names (and named in `missing`). */
export function withMarkers(w: JourneyWalk, step: StepDraft, ...fields: [string, string | undefined][]): TemplateContext {
  let ctx = w.context;
  for (const [field, template] of fields) if (template !== undefined) ctx = markMissing(template, field, ctx, step.nodeId, step.missing);
  return ctx;
}

/** One template filled in, its gaps named and shown as their own references. */
export function fill(w: JourneyWalk, step: StepDraft, template: string, field: string, mode: "text" | "html" = "text"): string {
  const ctx = markMissing(template, field, w.context, step.nodeId, step.missing);
  return rendering(() => renderTemplate(template, ctx, mode)) ?? template;
}

/** Renders, or null when even the marked context cannot fill a template in (a reference below a plain value). */
export function rendering<T>(render: () => T): T | null {
  try {
    return render();
  } catch (error) {
    if (error instanceof TemplateError) return null;
    throw error;
  }
}

/** The first reason a real run stops here, from the references that do not exist in the sample. */
export function stopsFor(missing: MissingValue[]): string | undefined {
  const first = missing.find((m) => m.stops);
  return first ? `A real run would stop here: ${first.path ? `{{${first.path}}}` : "a template"} has no value, so the step cannot be filled in.` : undefined;
}

const roots = new Set(["input", "contact", "steps", "run"]);

/**
 * Names each reference of `template` with no value in `context` (absent, null or "") and returns a copy of the
 * context in which the absent ones render as their own reference (`{{input.company}}`), so the email can still be
 * shown with the gap visible in place.
 */
function markMissing(template: string, field: string, context: TemplateContext, nodeId: string, missing: MissingValue[]): TemplateContext {
  let out = context;
  for (const ref of templateReferences(template)) {
    if (!roots.has(ref.parts[0] as string)) continue;
    const path = ref.parts.join(".");
    let value: unknown = context;
    let absent = false;
    for (const part of ref.parts) {
      if (value === null || typeof value !== "object" || !(part in value)) {
        absent = true;
        break;
      }
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined) absent = true;
    if (!absent && value !== null && value !== "") continue;
    if (!missing.some((m) => m.path === path && m.field === field)) missing.push({ nodeId, field, path, words: missingWords(path, ref.parts), stops: absent });
    if (absent) out = setPath(out, ref.parts, `{{${path}}}`);
  }
  return out;
}

function missingWords(path: string, parts: string[]): string {
  if (parts[0] === "steps") return `{{${path}}} has no value here: step ${parts[1]} has not run before this one in this sample`;
  return `{{${path}}} is empty in this sample`;
}

/** A copy of `root` with `value` at `parts`, creating objects on the way; unchanged where a plain value is in the way. */
function setPath<T>(root: T, parts: string[], value: unknown): T {
  const [head, ...rest] = parts;
  if (head === undefined) return value as T;
  if (root === undefined || root === null) return { [head]: setPath(undefined, rest, value) } as T;
  if (typeof root !== "object" || Array.isArray(root)) return root;
  return { ...root, [head]: setPath((root as Record<string, unknown>)[head], rest, value) } as T;
}
