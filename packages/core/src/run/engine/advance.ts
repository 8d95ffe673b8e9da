import { type Db, inTx, type Tx } from "@holdfast/db";
import type { RunWake } from "../../base/catalog";
import { applyPlan, applyPlans, type RunPlan } from "../apply/apply";
import { crashpoint } from "../../base/crash";
import { outboxInsert, outboxWithdrawTimerWakes } from "../../store/sql/outbox";
import { type RunRow, runsLockForWalk, runsLockForWalkMany } from "../../store/sql/runs";
import { type StepRow, stepsForRun, stepsForRuns } from "../../store/sql/steps";
import type { Graph } from "../../versions/graph";
import type { GraphCache } from "../../versions/graph-cache";
import { type Command, firstWalk, planForRun, type RunState } from "../../decide/walk/plan";

export interface AdvanceResult {
  /** What the walk decided; empty when the wake-up was a duplicate or the run had nothing new. */
  commands: Command["type"][];
  status: RunState["status"] | "missing";
}

/**
 * Handles a run wake-up: locks the run, lets the pure walk decide, and applies its commands (run/apply/apply.ts) with
 * their outbox and timeline rows in one transaction. Repeated or stale wake-ups find nothing new to do and change nothing.
 */
export async function advanceRun(db: Db, graphs: GraphCache, wake: RunWake, actor = "engine"): Promise<AdvanceResult> {
  const result = await inTx(db, async (tx) => {
    const run = await runsLockForWalk(tx, wake.orgId, wake.runId);
    if (!run) return { commands: [], status: "missing" as const };
    // After a timer fired: this walk is what its run.wake asks for (the fast path's backstop, not yet due). Withdrawn
    // under the run's lock and before its steps are read, so a firing after this walk writes a wake-up of its own.
    if (wake.reason === "timer_fired") await outboxWithdrawTimerWakes(tx, wake.orgId, wake.runId);
    return advanceLocked(tx, graphs, run, actor);
  });
  crashpoint("engine.after_commit");
  return result;
}

/** The walk for a run already locked FOR UPDATE in `tx` (the engine, and cancel). */
export async function advanceLocked(tx: Tx, graphs: GraphCache, run: RunRow, actor: string): Promise<AdvanceResult> {
  if (run.status !== "running") return { commands: [], status: run.status };
  const graph = await graphs.get(tx, run.orgId, run.versionId);
  const steps = await stepsForRun(tx, run.orgId, run.id);
  return walkAndApply(tx, graph, run, steps, actor);
}

/**
 * The first walk of a run inserted in `tx` (its start, same transaction), made by the start before anything was
 * written (decide/walk/plan.ts planAtStart, once a start): it has no steps yet, so nothing is read. The run's first steps,
 * their wake-ups and timeline rows commit with the run row itself; no engine hop.
 */
export async function applyFirstWalk(tx: Tx, graph: Graph, run: RunRow, walked: Command[], actor: string): Promise<AdvanceResult> {
  const commands = firstWalk(walked, run.held ?? false);
  await applyPlan(tx, graph, run, [], commands, actor);
  return { commands: commands.map((c) => c.type), status: statusAfter(commands) };
}

async function walkAndApply(tx: Tx, graph: Graph, run: RunRow, steps: StepRow[], actor: string): Promise<AdvanceResult> {
  const commands = planWalk(graph, run, steps);
  await applyPlan(tx, graph, run, steps, commands, actor);
  return { commands: commands.map((c) => c.type), status: statusAfter(commands) };
}

/**
 * Walks many runs in `tx` (the due sweep, the runs whose timers it just fired): locks those it can in id order
 * without waiting, reads their steps in one statement, decides each, and applies every plan together
 * (run/apply/apply.ts applyPlans). A run no longer running is left as it is. A run locked elsewhere (a person deciding an
 * approval holds it, then waits for the timer this transaction fired) is not waited for: it gets a run.wake for the
 * engine instead, so neither side waits on the other.
 */
export async function advanceMany(
  tx: Tx,
  graphs: GraphCache,
  targets: { orgId: string; runId: string }[],
  actor: string,
): Promise<(AdvanceResult & { runId: string })[]> {
  if (targets.length === 0) return [];
  const runs = await runsLockForWalkMany(tx, targets);
  const locked = new Set(runs.map((r) => r.id));
  const busy = [...new Map(targets.filter((t) => !locked.has(t.runId)).map((t) => [t.runId, t])).values()];
  await outboxInsert(
    tx,
    busy.map((t) => ({ orgId: t.orgId, runId: t.runId, topic: "run.wake", payload: { orgId: t.orgId, runId: t.runId, reason: "timer_fired" } })),
  );
  const running = runs.filter((r) => r.status === "running");
  const steps = await stepsForRuns(tx, running.map((r) => ({ orgId: r.orgId, runId: r.id })));
  const plans: RunPlan[] = [];
  for (const run of running) {
    const graph = await graphs.get(tx, run.orgId, run.versionId);
    const own = steps.get(run.id) ?? [];
    plans.push({ graph, run, steps: own, commands: planWalk(graph, run, own) });
  }
  await applyPlans(tx, plans, actor);
  return [
    ...busy.map((t) => ({ runId: t.runId, commands: [], status: "running" as const })),
    ...runs.filter((r) => r.status !== "running").map((r) => ({ runId: r.id, commands: [], status: r.status })),
    ...plans.map((p) => ({ runId: p.run.id, commands: p.commands.map((c) => c.type), status: statusAfter(p.commands) })),
  ];
}

/** The walk's commands for a run locked in the transaction (none while its paused automation holds it). */
function planWalk(graph: Graph, run: RunRow, steps: StepRow[]): Command[] {
  const state: RunState = {
    id: run.id,
    status: run.status,
    input: run.input,
    cancelRequested: run.cancelRequested,
    goalMet: run.goalMet ?? null,
    steps,
    maxSteps: run.maxSteps ?? null,
    expired: run.expired ?? false,
  };
  return planForRun(graph, state, run.held ?? false);
}

function statusAfter(commands: Command[]): RunState["status"] {
  for (const c of commands) {
    if (c.type === "complete_run") return "completed";
    if (c.type === "fail_run") return "failed";
    if (c.type === "cancel_run") return "cancelled";
    if (c.type === "convert_run") return "converted";
  }
  return "running";
}
