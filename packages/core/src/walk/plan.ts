import type { Graph } from "../versions/graph";
import { type Command, decide, isOpen, type RunState } from "./walk";

/**
 * The walks made outside the engine, so the run moves on in the same statement without an engine hop: a lane worker's
 * walk for "this step just settled" (from the run state it saw at claim time; the settle applies it only if the run
 * has not changed since: seq), and a start's first walk. Both return the walk's commands, which the applier
 * (apply/rows.ts) turns into rows.
 */

export interface Settled {
  stepId: string;
  status: "done" | "failed";
  output: unknown;
  error: unknown;
}

/**
 * The commands after a settle, or null when the engine should walk instead: the run is being cancelled, another step
 * is open or unwalked, or the walk would go on from another step too.
 */
export function planAfterSettle(graph: Graph, seen: RunState, settled: Settled): Command[] | null {
  if (seen.status !== "running" || seen.cancelRequested) return null;
  const others = seen.steps.filter((s) => s.id !== settled.stepId);
  if (others.some((s) => isOpen(s.status) || (!s.advanced && (s.status === "done" || s.status === "failed")))) {
    return null;
  }
  const self = seen.steps.find((s) => s.id === settled.stepId);
  if (!self) return null;
  const after: RunState = {
    ...seen,
    steps: [...others, { ...self, status: settled.status, output: settled.output, error: settled.error, advanced: false, leased: false }],
  };
  const commands = decide(graph, after);
  if (commands.some((c) => c.type === "mark_advanced" && c.stepId !== settled.stepId)) return null;
  return movesOn(commands) ? commands : null;
}

/** The commands of a run's first walk, from its graph and input alone (a new run has no steps). */
export function planAtStart(graph: Graph, input: unknown): Command[] | null {
  const commands = decide(graph, { id: "", status: "running", input, cancelRequested: false, steps: [] });
  return movesOn(commands) ? commands : null;
}

/** A walk that schedules nothing and ends nothing leaves the engine to decide what that means. */
function movesOn(commands: Command[]): boolean {
  return commands.some((c) => c.type === "schedule_step" || c.type === "complete_run" || c.type === "fail_run" || c.type === "cancel_run");
}
