import type { LaneName } from "../catalog";
import type { StepKind } from "../kinds/registry";
import type { Graph } from "../versions/graph";
import { decide, isOpen, type RunState } from "./walk";

/**
 * What a lane worker writes with its settle so the run moves on in the same transaction, without an engine hop:
 * the walk's commands for "this step just settled", computed from the run state the worker saw at claim time.
 * The database applies it only if the run has not changed since (seq) and is not being cancelled.
 */
export interface InlinePlan {
  steps: { nodeId: string; kind: StepKind; lane: LaneName; iteration: number; maxAttempts: number }[];
  events: { type: string; nodeId: string | null; data: Record<string, unknown> | null }[];
  finish: null | {
    status: "completed" | "failed";
    error: Record<string, unknown> | null;
    event: { type: string; nodeId: string | null; data: Record<string, unknown> | null };
  };
}

export interface Settled {
  stepId: string;
  status: "done" | "failed";
  output: unknown;
  error: unknown;
}

/**
 * Returns the plan, or null when the engine should walk instead: the run is being cancelled, another step is open
 * or unwalked, or the walk wants something only the engine does.
 */
export function planAfterSettle(
  graph: Graph,
  seen: RunState,
  settled: Settled,
): InlinePlan | null {
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
  return planOf(decide(graph, after), settled.stepId);
}

/**
 * The plan of a run's first walk, from its graph and input alone (a new run has no steps), so a start can commit it
 * with the run row in one statement. null when the walk needs the engine (a first step that waits on a timer).
 */
export function planAtStart(graph: Graph, input: unknown): InlinePlan | null {
  return planOf(decide(graph, { id: "", status: "running", input, cancelRequested: false, steps: [] }), null);
}

/** The walk's commands as a plan the database applies, or null when one of them is the engine's to do. */
function planOf(commands: ReturnType<typeof decide>, settledStepId: string | null): InlinePlan | null {
  const plan: InlinePlan = { steps: [], events: [], finish: null };
  for (const c of commands) {
    switch (c.type) {
      case "mark_advanced":
        if (c.stepId !== settledStepId) return null;
        break;
      case "record":
        plan.events.push({ type: c.event, nodeId: c.nodeId ?? null, data: c.data ?? null });
        break;
      case "schedule_step":
        if (c.kind === "wait" || c.kind === "wait_for_reply" || c.kind === "approval") return null; // a timer is computed and written by the engine
        plan.steps.push({ nodeId: c.nodeId, kind: c.kind, lane: c.lane, iteration: c.iteration, maxAttempts: c.maxAttempts });
        break;
      case "complete_run":
        plan.finish = { status: "completed", error: null, event: { type: "run.completed", nodeId: c.nodeId, data: null } };
        break;
      case "fail_run":
        if (c.stepIds?.length) return null; // open steps to close: the engine's walk
        plan.finish = {
          status: "failed",
          error: { reason: c.reason, nodeId: c.nodeId ?? null, ...(c.budget ? { budget: c.budget } : {}) },
          event: { type: "run.failed", nodeId: c.nodeId ?? null, data: { reason: c.reason, ...(c.budget ? { budget: c.budget } : {}) } },
        };
        break;
      case "cancel_run":
      case "close_approval":
        return null;
    }
  }
  if (plan.steps.length === 0 && !plan.finish) return null; // nothing to move on to: the engine decides what that means
  return plan;
}
