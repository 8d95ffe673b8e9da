import type { z } from "zod";
import type { FieldSpec } from "../../forms/fields";
import { defaultConfigIn } from "../defaults";

/**
 * An automation template: a journey ready to publish once a few questions are answered (which mailbox, which model,
 * who approves). A template is code, one module per template (versions/kinds/templates/<id>.ts): its questions are form
 * fields with the widgets the step forms use, checked by its answers' zod schema, and `graph` builds the draft from
 * the step kinds' own defaults with fixed step ids. Pure and browser-safe (the gallery and its form load it).
 */
export interface TemplateNode {
  id: string;
  kind: string;
  name: string;
  config: Record<string, unknown>;
  position: { x: number; y: number };
}
export interface TemplateGraph {
  nodes: TemplateNode[];
  edges: { from: string; to: string; label?: string }[];
}

export interface AutomationTemplate<S extends z.ZodType = z.ZodType> {
  /** A stable slug: the page's address and the tRPC input. */
  id: string;
  /** Plain words, for the gallery's card and the form's heading. */
  name: string;
  /** One line: what the journey is for. */
  purpose: string;
  /** The journey in words, step by step, for the gallery (a picture of its steps). */
  steps: string[];
  /** How it starts and anything a marketer must arrange outside Holdfast, in a sentence or two. */
  note: string;
  /** The name a new automation from it is offered. */
  suggestedName: string;
  /** What the automation counts as its goal (automations.goal), when the journey needs one. */
  goal?: "replied" | "clicked";
  /** The questions, as step forms' fields: only what the journey needs. */
  fields: FieldSpec[];
  answers: S;
  /** The answers a new form starts from. */
  defaults: Partial<z.input<S>>;
  graph(answers: z.output<S>): TemplateGraph;
}

export function defineTemplate<S extends z.ZodType>(t: AutomationTemplate<S>): AutomationTemplate<S> {
  return t;
}

/** Rows of the canvas, top to bottom; a row of two is a fork (the first output's branch on the left). */
const rowPx = 130;
const columnPx = 300;

/**
 * The template's steps laid out in rows, each step's config its kind's defaults (as a step added in the editor
 * starts: `defaultConfigIn`, so a wait counts in the contact's zone where the trigger says) with the template's
 * settings over them.
 */
export function layOut(rows: Omit<TemplateNode, "position" | "config">[][], configs: Record<string, Record<string, unknown>>, edges: TemplateGraph["edges"]): TemplateGraph {
  const nodes: TemplateNode[] = [];
  rows.forEach((row, y) => {
    row.forEach((n, x) => {
      const base = defaultConfigIn(n.kind, nodes) as Record<string, unknown>;
      const config = { ...base, ...(configs[n.id] ?? {}) };
      nodes.push({ ...n, config, position: { x: (x - (row.length - 1) / 2) * columnPx, y: y * rowPx } });
    });
  });
  return { nodes, edges };
}
