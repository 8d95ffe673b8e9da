import type { LaneName } from "../../base/catalog";
import { rowsAfterSettle, type SettledStep, stepsAfterSettle } from "../apply/inline";
import type { ClaimedStep } from "../../store/sql/steps";
import type { RunSettleRequest } from "../../store/sql/steps-settle";
import type { Graph } from "../../versions/graph";
import { planAfterSettle, type RunState } from "../../decide/walk/plan";

/**
 * A lane worker walks on from the step it just settled, in the settle's own statement: the walk's commands from the
 * run as the claim saw it (decide/walk/plan.ts), turned into rows by the applier (run/apply/inline.ts). null: the engine walks.
 */
export function walkOnAfterSettle(
  graph: Graph,
  step: ClaimedStep,
  settled: SettledStep,
  worker: string,
  claim: { lane: LaneName; leaseMs: number } | null,
): RunSettleRequest["advance"] {
  const seen: RunState = {
    id: step.runId,
    status: "running",
    input: step.input,
    cancelRequested: false,
    steps: step.runSteps,
    maxSteps: step.maxSteps ?? null,
    expired: step.expired ?? false,
  };
  const commands = planAfterSettle(graph, seen, { ...settled, stepId: step.id });
  const rows = commands && rowsAfterSettle(commands, step, worker, claim);
  return rows ? { runSeq: step.runSeq, rows, stepsAfter: stepsAfterSettle(step, settled, rows) } : null;
}
