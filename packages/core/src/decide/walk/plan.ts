import type { Graph } from "../../versions/graph";
import { isStepKind, kindOf } from "../../versions/kinds/registry";
import { type Command, decide, type Goal, isOpen, type RunState, scheduleAt } from "./walk";

/**
 * The one door to the walk: every part of Holdfast that needs the walk's commands asks here, and hands them to the
 * applier (run/apply/apply.ts in a transaction, run/apply/rows.ts and run/apply/inline.ts in one statement), which only carries
 * them out. `decide` itself (walk.ts) is called from this module alone.
 *
 * - a start's first walk (planAtStart, made once per start whichever way the start is written),
 * - a lane worker's walk for "this step just settled" (planAfterSettle, from the run as its claim saw it),
 * - the engine's walk of a locked run (planForRun), also used by cancel, resolve, firing a wait and migrations,
 * - the step a person moves a run onto (planStepAt: a migration's "move to this step", a retry's fresh attempts),
 * - the editor's preview, which walks a sample run turn by turn (planPreviewTurn).
 */

export type { Command, Goal, RunState };

/** A run's ending commands: the walk's last word for it. */
const ends = (c: Command) => c.type === "complete_run" || c.type === "fail_run" || c.type === "cancel_run" || c.type === "convert_run";

export interface Settled {
  stepId: string;
  status: "done" | "failed";
  output: unknown;
  error: unknown;
}

/** A run that has not taken a step yet. */
function newRun(input: unknown): RunState {
  return { id: "", status: "running", input, cancelRequested: false, steps: [] };
}

/**
 * The commands of a run's first walk, from its graph and input alone (a new run has no steps). Made once a start: the
 * one-statement start turns them into rows (run/apply/inline.ts rowsAtStart), the transactional start applies them after
 * its run row is inserted (firstWalk below decides what a hold or a dead end makes of them).
 */
export function planAtStart(graph: Graph, input: unknown): Command[] {
  return decide(graph, newRun(input));
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

/** The engine's walk of a run locked in its transaction: `decide`, then what a hold or a dead end makes of it. */
export function planForRun(graph: Graph, run: RunState, held: boolean): Command[] {
  return applicable(decide(graph, run), run.steps, held);
}

/** A start's first walk (planAtStart's commands) as the transactional start applies them to its new run. */
export function firstWalk(commands: Command[], held: boolean): Command[] {
  return applicable(commands, [], held);
}

/**
 * What of a walk is applied: nothing while the run's paused automation holds it (holdsWalk); a fail when the walk
 * found nothing to do and the run has no open step (no way forward, said where a person sees it); else the walk.
 */
function applicable(commands: Command[], steps: RunState["steps"], held: boolean): Command[] {
  // Held by its paused automation: nothing is applied, so the walk after Resume decides the same step again.
  if (holdsWalk(held, commands)) return [];
  if (commands.length === 0 && !steps.some((s) => isOpen(s.status))) {
    return [{ type: "fail_run", reason: "no way forward: no open step and nothing left to walk" }];
  }
  return commands;
}

/**
 * A held run takes no next step: a walk that would schedule one is not applied at all (its settled step stays
 * unwalked, so the walk after Resume decides the same thing again). A cancel, or a walk that only ends the run,
 * goes ahead.
 */
export function holdsWalk(held: boolean, commands: Command[]): boolean {
  if (!held) return false;
  if (commands.some((c) => c.type === "cancel_run" || c.type === "convert_run")) return false;
  return commands.some((c) => c.type === "schedule_step");
}

/**
 * The step to schedule on `nodeId` for a run a person moved there (a migration's "move to this step"), or, with no
 * steps, what a fresh round of attempts there looks like (a retry): as the walk would have scheduled it.
 */
export function planStepAt(graph: Graph, run: RunState, nodeId: string): Extract<Command, { type: "schedule_step" }> | null {
  return scheduleAt(graph, run, nodeId);
}

/** The editor's preview: one turn of the walk of a sample run it advances itself (run/preview/journey.ts). */
export function planPreviewTurn(graph: Graph, run: RunState): Command[] {
  return decide(graph, run);
}

/** A walk that schedules nothing and ends nothing leaves the engine to decide what that means. */
export function movesOn(commands: Command[]): boolean {
  return commands.some((c) => c.type === "schedule_step" || ends(c));
}

/** What the walk does after a wait's timer fires, when the graph alone decides it (planAfterTimer). */
export interface TimerWalk {
  /** The edges taken from the wait, in order (each a journey count). */
  edges: Extract<Command, { type: "take_edge" }>[];
  /** The step scheduled next (a plain step: not a wait, a reply wait or an approval), or null when the run ends. */
  next: Extract<Command, { type: "schedule_step" }> | null;
  /** The end node reached, when the run completes. */
  end: string | null;
}

/**
 * The walk after the timer of `nodeId` (a wait or a reply wait) fired, for a run that has nothing else open, nothing
 * else to walk on, is running, not cancelling, not held and within its budgets: null unless that walk is the same for
 * every such run of the graph (edges to a plain step or to an end, no branch, no split, no approval). The timers of
 * such runs are fired and walked as a set in SQL (store/sql/functions/timers_fire_walk.sql), which checks each run is
 * one this is true for and sets the next step's iteration from the run's own steps; any other run is walked here.
 * Decided by `decide` itself on a run that holds only the fired wait step, as it stands after its firing.
 */
export function planAfterTimer(graph: Graph, nodeId: string): TimerWalk | null {
  const node = graph.nodes.find((n) => n.id === nodeId);
  if (node?.kind !== "wait" && node?.kind !== "wait_for_reply") return null;
  const fired = { dueAt: "", firedAt: "", latenessMs: 0, ...(node.kind === "wait_for_reply" ? { outcome: "timeout" } : {}) };
  const step = { id: "fired", nodeId, iteration: 1, status: "done" as const, output: fired, error: null, advanced: false, leased: false };
  const commands = planForRun(graph, { id: "", status: "running", input: {}, cancelRequested: false, steps: [step] }, false);
  const [first, ...rest] = commands;
  if (first?.type !== "mark_advanced" || first.stepId !== step.id) return null;
  const edges: TimerWalk["edges"] = [];
  for (const [i, c] of rest.entries()) {
    const last = i === rest.length - 1;
    if (c.type === "take_edge" && !last) edges.push(c);
    else if (c.type === "complete_run" && last) return { edges, next: null, end: c.nodeId };
    else if (c.type === "schedule_step" && last && !waits(c.kind)) return { edges, next: c, end: null };
    else return null;
  }
  return null;
}

/** A step kind that waits (a timer, a signal or a person): scheduling one needs the database (its timer, its request). */
function waits(kind: string): boolean {
  const module = kindOf(kind);
  return !isStepKind(module) || module.waits;
}
