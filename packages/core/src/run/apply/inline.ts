import type { LaneName } from "../../base/catalog";
import { effectKinds } from "../../versions/kinds/registry";
import type { PlanRows } from "../../store/sql/plan-rows";
import type { RunEventRow } from "../../store/sql/run-events";
import { asJsonb } from "../../base/json";
import type { ClaimedStep, StepRow } from "../../store/sql/steps";
import type { Command } from "../../decide/walk/plan";
import { prepare, statementRows } from "./rows";

/**
 * Walks applied by one statement instead of the engine's transaction: the rows for the walk's commands (made by
 * decide/walk/plan.ts, never here), or null when they need the transaction (a timer, an approval, steps to close).
 */

/** A settled step as its worker reports it. */
export interface SettledStep {
  status: "done" | "failed";
  output: unknown;
  error: unknown;
}

/** A start's first walk, after its `run.started` row: what holdfast_run_start inserts with the run. */
export function rowsAtStart(commands: Command[], run: { orgId: string; runId: string }, started: RunEventRow): PlanRows | null {
  const rows = statementRows(prepare(commands, { orgId: run.orgId, runId: run.runId, actor: "start" }), effectKinds());
  if (!rows) return null;
  rows.events.unshift(started);
  return rows;
}

/**
 * A worker's walk after its step settled (decide/walk/plan.ts planAfterSettle, from the run as its claim saw it): what
 * holdfast_step_settle inserts if the run has not changed since. `claim`: the first step on this lane comes already
 * claimed by `worker` (local dispatch).
 */
export function rowsAfterSettle(
  commands: Command[],
  step: Pick<ClaimedStep, "orgId" | "runId">,
  worker: string,
  claim: { lane: LaneName; leaseMs: number } | null,
): PlanRows | null {
  return statementRows(prepare(commands, { orgId: step.orgId, runId: step.runId, actor: worker, claim }), effectKinds());
}

/**
 * The run's steps as holdfast_run_steps would read them right after the settle that applied `rows` commits, so the
 * step those rows claimed can start its own walk without the settle sending them back: the steps the claim saw, this
 * step settled and walked on from, and the one new step, running under this worker's lease. It holds because the
 * settle applies `rows` only while the run's seq is the claim's (nothing changed the run's course since: every walk,
 * migration, cancel and hold moves seq) and a worker walks on only when every other step is settled and walked from
 * (decide/walk/plan.ts planAfterSettle), and nothing changes such a step without moving seq. null when the walk inserted
 * more than the step it claimed (their order is the table's): the settle reads them.
 */
export function stepsAfterSettle(step: ClaimedStep, settled: SettledStep, rows: PlanRows): StepRow[] | null {
  const claim = rows.claim;
  const next = rows.steps[0];
  if (!claim || rows.steps.length !== 1 || next?.id !== claim.stepId) return null;
  const self = step.runSteps.find((s) => s.id === step.id);
  if (!self) return null;
  return [
    ...step.runSteps.filter((s) => s.id !== step.id),
    {
      ...self,
      status: settled.status,
      // holdfast_step_settle keeps the output of a step that failed and clears the error of one that is done.
      output: settled.status === "done" ? asJsonb(settled.output ?? null) : self.output,
      error: settled.status === "done" ? null : asJsonb(settled.error ?? null),
      advanced: true,
      leased: false,
    },
    // In jsonb's key order, as the read's rows are.
    { id: next.id, error: null, leased: true, nodeId: next.nodeId, output: null, status: "running", advanced: false, iteration: next.iteration },
  ];
}
