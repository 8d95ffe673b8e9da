import type { LaneName } from "../catalog";
import { effectKinds } from "../kinds/registry";
import type { PlanRows } from "../sql/plan-rows";
import type { RunEventRow } from "../sql/run-events";
import type { ClaimedStep } from "../sql/steps";
import type { Graph } from "../versions/graph";
import { planAfterSettle, planAtStart, type Settled } from "../walk/plan";
import { prepare, statementRows } from "./rows";

/**
 * The walks applied by one statement instead of the engine's transaction: the applier's rows for them, or null when
 * the engine must walk (the walk needs the database: a timer, an approval, steps to close).
 */

/** A start's first walk, after its `run.started` row: what holdfast_run_start inserts with the run. */
export function rowsAtStart(graph: Graph, run: { orgId: string; runId: string; input: unknown }, started: RunEventRow): PlanRows | null {
  const commands = planAtStart(graph, run.input);
  const rows = commands && statementRows(prepare(commands, { orgId: run.orgId, runId: run.runId, actor: "start" }), effectKinds());
  if (!rows) return null;
  rows.events.unshift(started);
  return rows;
}

/**
 * A worker's walk after its step settled, from the run as its claim saw it: what holdfast_step_settle inserts if the
 * run has not changed since. `claim`: the first step on this lane comes already claimed by `worker` (local dispatch).
 */
export function rowsAfterSettle(
  graph: Graph,
  step: ClaimedStep,
  settled: Omit<Settled, "stepId">,
  worker: string,
  claim: { lane: LaneName; leaseMs: number } | null,
): PlanRows | null {
  const seen = {
    id: step.runId,
    status: "running" as const,
    input: step.input,
    cancelRequested: false,
    steps: step.runSteps,
    maxSteps: step.maxSteps ?? null,
    expired: step.expired ?? false,
  };
  const commands = planAfterSettle(graph, seen, { ...settled, stepId: step.id });
  return commands && statementRows(prepare(commands, { orgId: step.orgId, runId: step.runId, actor: worker, claim }), effectKinds());
}
