import type { z } from "zod";
import type { LaneName } from "../../base/catalog";
import { approval } from "./approval";
import { branch } from "./branch";
import { crmUpsert } from "./crm_upsert";
import { end } from "./end";
import { httpRequest } from "./http_request";
import type { InlineKind, KindModule, StepKindModule } from "./kind";
import { modelDraft } from "./model_draft";
import { sendEmail } from "./send_email";
import { split } from "./split";
import { trigger } from "./trigger";
import { wait } from "./wait";
import { waitForReply } from "./wait_for_reply";

/**
 * The registry of node kinds: the built-in modules, in palette order, plus any registered at start-up
 * (`registerKind`, e.g. a test's kind). Everything that asks "what can a node be" reads it: the graph schema
 * (versions/graph.ts), the lanes' kinds and the effect kinds (store/sql/steps-claim.ts), the walk, the publish checks and the
 * editor's palette and forms.
 */
export const builtInKinds = [trigger, wait, branch, split, httpRequest, modelDraft, crmUpsert, sendEmail, approval, waitForReply, end] as const;

type BuiltIn = (typeof builtInKinds)[number];
export type NodeKind = BuiltIn["kind"];
/** The kinds that run as steps on a lane. */
export type StepKind = Extract<BuiltIn, { inline: false }>["kind"];
/** The graph's node, typed per built-in kind. */
export type NodeOf<M> = M extends KindModule<infer K, infer S>
  ? { id: string; name?: string | undefined; position?: { x: number; y: number } | undefined; kind: K; config: z.output<S> }
  : never;
export type BuiltInNode = NodeOf<BuiltIn>;

const registry = new Map<string, KindModule>(builtInKinds.map((k) => [k.kind, k as KindModule]));

/** Adds a kind (one module). Its steps need a connector or handler registered by kind to run on a worker. */
export function registerKind(module: KindModule): void {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(module.kind)) throw new Error(`kind "${module.kind}": a lowercase slug`);
  if (registry.has(module.kind) && registry.get(module.kind) !== module) throw new Error(`kind "${module.kind}" is registered already`);
  registry.set(module.kind, module);
}

export function kindOf(kind: string): KindModule | undefined {
  return registry.get(kind);
}

export function allKinds(): KindModule[] {
  return [...registry.values()];
}

export function isStepKind(module: KindModule | undefined): module is StepKindModule {
  return module !== undefined && !module.inline;
}

export function isInlineKind(module: KindModule | undefined): module is InlineKind {
  return module?.inline === true;
}

/** The lane a step kind runs on. */
export function laneOf(kind: string): LaneName {
  const module = registry.get(kind);
  if (!isStepKind(module)) throw new Error(`"${kind}" is not a step kind`);
  return module.lane;
}

/** The step kinds whose claim also claims (or reads) the effect ledger row, in the same commit. */
export function effectKinds(): string[] {
  return allKinds().flatMap((k) => (isStepKind(k) && k.effect ? [k.kind] : []));
}

/** The step kinds a lane serves. */
export function laneKinds(lane: LaneName): string[] {
  return allKinds().flatMap((k) => (isStepKind(k) && k.lane === lane ? [k.kind] : []));
}

/** Every edge label any kind uses. */
export function edgeLabels(): string[] {
  return [...new Set(allKinds().flatMap((k) => k.outputs ?? []))];
}

/** An edge label some kind may use: one of the kinds' own, or one named by a node's config (an A/B split's path). */
export function isEdgeLabel(label: string): boolean {
  return edgeLabels().includes(label) || allKinds().some((k) => k.outputLabel?.test(label));
}
