/**
 * `bench_noop`: a real durable step that does no IO, for the race's scenario (b). It is claimed with a lease,
 * performed by a lane worker's slot and settled in the worker's fenced settle commit (which claims the next step, as
 * for any chained step), exactly like `http_request` minus the effect ledger and the HTTP call. It is not a product
 * kind: the bench registers it through the kind registry in its own process and, by `--import` of this file, in every
 * app process it spawns (see `preloadArgs`), so production kinds and the apps are untouched.
 */
import { fileURLToPath } from "node:url";
import { defaultHandlers, type StepHandler } from "@holdfast/core/run";
import { defineStepKind, registerKind } from "@holdfast/core/kinds";
import { z } from "zod";

export const benchNoopKind = "bench_noop";

export const benchNoop = defineStepKind({
  kind: benchNoopKind,
  label: "No-op (bench)",
  icon: "·",
  description: "Does nothing and succeeds: the benchmark's durable step without an outside call.",
  group: "Actions",
  inline: false,
  lane: "io",
  effect: false,
  waits: false,
  config: z.object({}).strict(),
  defaults: {},
  fields: [],
  outputs: null,
  output: [{ path: "ok", label: "Always true" }],
  summary: () => "Does nothing",
});

const handler: StepHandler = async () => ({ kind: "done", output: { ok: true } });

registerKind(benchNoop);
// The runner's handlers by kind (run/steps/runner.ts): a worker that has this module loaded can perform the step.
defaultHandlers[benchNoopKind] = handler;

/** Node flags that load this module into a spawned app before its main module (tsx first, for the TypeScript). */
export const preloadArgs = ["--import", "tsx", "--import", fileURLToPath(import.meta.url)];
