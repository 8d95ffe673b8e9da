import type { z } from "zod";
import type { LaneName } from "../../base/catalog";
import { type FieldSpec, fieldValue } from "../forms/fields";

/**
 * A node kind: everything about it in one module (versions/kinds/<kind>.ts). The graph schema, the lanes' kinds, the walk's
 * edge labels, the publish checks and the editor's palette and forms are all read from these modules
 * (versions/kinds/registry.ts), so adding a kind is one file plus its tests. Pure: no IO (the browser loads these modules);
 * a kind's connector, which performs it, is registered by kind in run/connectors/registry.ts.
 */

export interface GraphProblem {
  path: string;
  message: string;
  /** Where it is fixed, when that is outside the editor (a page of Settings). */
  href?: string;
}

/** A value a step leaves for later steps' templates: `{{steps.<id>.output.<path>}}`. */
export interface OutputField {
  path: string;
  label: string;
}

/** The nodes of a graph as a kind's check sees them (its own config typed, the rest by kind and id). */
export interface CheckNode<C> {
  id: string;
  config: C;
}
export interface CheckGraph {
  nodes: { id: string; kind: string; config?: unknown }[];
  edges: { from: string; to: string; label?: string }[];
}

interface KindBase<K extends string, S extends z.ZodType> {
  kind: K;
  /** Plain words, for the palette and the node. */
  label: string;
  /** A single emoji or symbol shown on the node and in the palette. */
  icon: string;
  /** One sentence: what the step does. */
  description: string;
  /** Where the palette lists it. */
  group: "Start" | "Logic" | "Actions" | "Waits";
  config: S;
  /** The config a new node starts from (placeholders a marketer replaces in the form). */
  defaults: z.input<S>;
  fields: FieldSpec[];
  /**
   * Labelled outputs (each needs exactly one edge), or null: exactly one unlabelled edge; `[]`: no edges (an end).
   */
  outputs: string[] | null;
  /** Outputs named by the node's config (an A/B split's paths): they take the place of `outputs` (nodeOutputs). */
  outputsFor?(config: z.output<S>): string[];
  /** What an output named by config looks like (any edge label matching it is one this kind may use). */
  outputLabel?: RegExp;
  /** Each labelled output in words, for the panel's "Then" ("When they reply", "Otherwise"). */
  outputWords?: Record<string, string>;
  /** What the step leaves for later templates. */
  output: OutputField[];
  /** The node as one line ("Wait until 09:00 next weekday, contact's zone"). */
  summary(config: z.output<S>): string;
  /** Rules a schema cannot say, about this node in its graph (the organisation's are in versions/checks.ts). */
  checks?(node: CheckNode<z.output<S>>, graph: CheckGraph): GraphProblem[];
}

/** Evaluated by the engine inside its transaction (trigger, branch, end): never a step on a lane. */
export interface InlineKind<K extends string = string, S extends z.ZodType = z.ZodType> extends KindBase<K, S> {
  inline: true;
}

/** Runs as a step on a lane, performed by a worker (or settled by a timer or a signal when it waits). */
export interface StepKindModule<K extends string = string, S extends z.ZodType = z.ZodType> extends KindBase<K, S> {
  inline: false;
  lane: LaneName;
  /** Acts on the outside world through the effect ledger: its step claim also claims the effect key. */
  effect: boolean;
  /** Waits on a timer or a signal and is never attempted (maxAttempts 1); settles by its timer or a signal. */
  waits: boolean;
  /** The edge to follow after the step settled, for kinds with labelled outputs (a reply wait: reply / timeout). */
  edgeFor?(output: unknown): string | undefined;
  /** Attempts before the step fails (a lane's retry policy applies when undefined). */
  maxAttempts?(config: z.output<S>): number | undefined;
}

export type KindModule<K extends string = string, S extends z.ZodType = z.ZodType> = InlineKind<K, S> | StepKindModule<K, S>;

/** Typed identities: keep a module's literal kind and config types for the graph's node union. */
export function defineInlineKind<K extends string, S extends z.ZodType>(module: InlineKind<K, S>): InlineKind<K, S> {
  return module;
}
export function defineStepKind<K extends string, S extends z.ZodType>(module: StepKindModule<K, S>): StepKindModule<K, S> {
  return module;
}

/**
 * A node's labelled outputs: named by its config (an A/B split's paths) or its kind's own; null: one unlabelled edge.
 * A config that does not parse (a draft) falls back to the kind's own outputs.
 */
export function nodeOutputs(module: KindModule, config: unknown): string[] | null {
  if (!module.outputsFor) return module.outputs;
  const parsed = module.config.safeParse(config ?? {});
  return parsed.success ? module.outputsFor(parsed.data) : module.outputs;
}

/** Every config field rendered as a template when the step runs: [field path under config, template]. */
export function templateFieldsOf(module: KindModule, config: unknown): [string, string][] {
  const out: [string, string][] = [];
  for (const f of module.fields) {
    const value = fieldValue(config, f.name);
    if (f.widget.type === "template" && typeof value === "string") out.push([f.name, value]);
    if (f.widget.type === "key-values" && f.widget.value === "template" && value && typeof value === "object") {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (typeof v === "string") out.push([`${f.name}.${k}`, v]);
    }
  }
  return out;
}

/** Every connection a node names: [field path under config, connection name, connection kind]. */
export function connectionFieldsOf(module: KindModule, config: unknown): { field: string; name: string; kind: string }[] {
  const out: { field: string; name: string; kind: string }[] = [];
  for (const f of module.fields) {
    const value = fieldValue(config, f.name);
    if (f.widget.type === "connection" && typeof value === "string" && value !== "") out.push({ field: f.name, name: value, kind: f.widget.kind });
  }
  return out;
}
