import { lanes, type LaneName } from "../../base/catalog";
import { isStepKind, kindOf, laneOf, type StepKind } from "../../versions/kinds/registry";
import type { Decision, Graph, GraphNode } from "../../versions/graph";
import { evaluate, type WalkContext } from "./condition";
import { choosePath, splitSubject } from "./split";
import type { StepState, StepStatus } from "../../base/types/steps";
import type { Goal } from "../../base/types/goals";

export type { Goal };

/**
 * The walk: a pure function of (run state, graph) that returns the commands to carry out. No SQL, no queue, no
 * clock. The engine's shell loads the state, calls `decide`, and applies the commands in one transaction.
 */

export type { StepState, StepStatus };

export interface RunState {
  id: string;
  status: "running" | "completed" | "failed" | "cancelled" | "converted";
  input: unknown;
  cancelRequested: boolean;
  /** The automation's goal was met for the run's contact (runs.goal_met, set with the cancel request): it ends converted. */
  goalMet?: Goal | null;
  steps: StepState[];
  /** Run budgets: the steps it may execute (null or absent: no limit) and whether its age limit has passed. */
  maxSteps?: number | null;
  expired?: boolean;
}

export type Command =
  | { type: "schedule_step"; nodeId: string; kind: StepKind; lane: LaneName; iteration: number; maxAttempts: number; stage?: number }
  /** An approval whose deadline passed: its request is closed as escalated, decided by the deadline, or expired. */
  | { type: "close_approval"; stepId: string; status: "escalated" | "expired" | Decision }
  | { type: "mark_advanced"; stepId: string }
  | { type: "record"; event: string; nodeId?: string; data?: Record<string, unknown> }
  /**
   * The walk went along this edge (counted on the canvas: journey counts' 'edge:<label>:<to>' at `from`). `split`: it
   * leaves an A/B split, so its count names the run (the path a run took is what a later reply or click counts on).
   */
  | { type: "take_edge"; from: string; label: string | null; to: string; split?: true }
  | { type: "complete_run"; nodeId: string }
  | { type: "fail_run"; reason: string; nodeId?: string; budget?: "steps" | "age"; stepIds?: string[] }
  | { type: "cancel_run"; stepIds: string[] }
  /** The goal was met: the run ends as converted, its open steps closed with it (the cancellation's safe point). */
  | { type: "convert_run"; stepIds: string[]; goal: Goal };

/** A walk that passes this many inline nodes without reaching a step or an end is a loop with no step in it. */
export const maxInlineHops = 200;

/** A step that still has a way forward of its own: ready, running, waiting on a timer, or parked for a person. */
export function isOpen(status: StepStatus): boolean {
  return status === "ready" || status === "running" || status === "waiting" || status === "parked";
}

export function isTerminal(status: RunState["status"]): boolean {
  return status !== "running";
}

export function decide(graph: Graph, run: RunState): Command[] {
  if (isTerminal(run.status)) return [];
  if (run.cancelRequested) return onCancelRequested(run);
  if (run.expired) return onAgeBudget(run);
  const trigger = graph.nodes.find((n) => n.kind === "trigger");
  if (!trigger) return [{ type: "fail_run", reason: "the graph has no trigger" }];
  if (run.steps.length === 0) return [{ type: "record", event: "run.walk_started" }, ...walkFrom(graph, run, trigger.id, [])];

  const commands: Command[] = [];
  // Settled steps are walked on in a stable order; with no parallel fan-out there is at most one in practice.
  const settled = run.steps
    .filter((s) => !s.advanced && (s.status === "done" || s.status === "failed"))
    .sort((a, b) => a.nodeId.localeCompare(b.nodeId) || a.iteration - b.iteration);
  for (const step of settled) {
    commands.push({ type: "mark_advanced", stepId: step.id });
    if (step.status === "failed") {
      commands.push({ type: "fail_run", reason: `step ${step.nodeId} failed`, nodeId: step.nodeId });
      return commands;
    }
    // A reply wait goes on along its "reply" edge when a signal settled it, else along "timeout".
    const settledNode = graph.nodes.find((n) => n.id === step.nodeId);
    const settledKind = kindOf(settledNode?.kind ?? "");
    let label: string | undefined = isStepKind(settledKind) ? settledKind.edgeFor?.(step.output) : undefined;
    if (settledNode?.kind === "approval") {
      const next = afterApproval(settledNode, step, run, commands);
      commands.push(...next.commands);
      if (next.label === undefined) {
        if (commands.some((c) => c.type === "fail_run")) return commands;
        continue; // escalated: a new approval step was scheduled
      }
      label = next.label;
    }
    commands.push(...walkFrom(graph, run, step.nodeId, commands, label));
    if (commands.some((c) => c.type === "complete_run" || c.type === "fail_run")) return commands;
  }
  return commands;
}

type ApprovalNode = Extract<GraphNode, { kind: "approval" }>;

/**
 * Where a settled approval step leads. A decision (a signal) goes along its edge. A deadline (the step's timer)
 * applies the node's `onDeadline`: escalate once (a new step, stage 2, to the escalation approvers), take the default
 * decision, or stop the run with a visible reason. After an escalation's own deadline its `afterwards` applies.
 */
function afterApproval(node: ApprovalNode, step: StepState, run: RunState, earlier: Command[]): { commands: Command[]; label?: EdgeLabel } {
  const output = (step.output ?? {}) as { outcome?: string; reply?: { decision?: Decision }; stage?: number };
  if (output.outcome === "reply" && (output.reply?.decision === "approved" || output.reply?.decision === "rejected")) {
    return { commands: [], label: output.reply.decision };
  }
  const stage = output.stage ?? 1;
  const rule = node.config.onDeadline;
  const then: Decision | "stop" | "escalate" =
    rule.action === "escalate" ? (stage === 1 ? "escalate" : rule.afterwards) : rule.action === "default" ? rule.decision : "stop";
  if (then === "escalate") {
    const next = scheduleWithinBudget(node, run, earlier);
    if (next.type !== "schedule_step") return { commands: [next] };
    return {
      commands: [
        { type: "close_approval", stepId: step.id, status: "escalated" },
        { type: "record", event: "approval.escalated", nodeId: node.id, data: { fromStage: stage, toStage: stage + 1 } },
        { ...next, stage: stage + 1 } as Command,
      ],
    };
  }
  if (then === "stop") {
    return {
      commands: [
        { type: "close_approval", stepId: step.id, status: "expired" },
        { type: "fail_run", reason: `approval ${node.id}: the deadline passed with no decision`, nodeId: node.id },
      ],
    };
  }
  return {
    commands: [
      { type: "close_approval", stepId: step.id, status: then },
      { type: "record", event: "approval.defaulted", nodeId: node.id, data: { decision: then, stage } },
    ],
    label: then,
  };
}

/** Older than its age budget: stop (its open waits close) once nothing is in flight, with the reason on the run. */
function onAgeBudget(run: RunState): Command[] {
  if (run.steps.some((s) => s.status === "running" && s.leased)) return [];
  const open = run.steps.filter((s) => isOpen(s.status)).map((s) => s.id);
  return [{ type: "fail_run", reason: "age budget: the run is older than its limit", budget: "age", stepIds: open }];
}

/**
 * A cancel request, or a goal met (which rides on the cancel request): the run ends at its next safe point, as
 * converted when its goal was met, else cancelled.
 */
function onCancelRequested(run: RunState): Command[] {
  // An effect may be in flight: the run waits for its settle (which wakes the run again), never ends inside it.
  if (run.steps.some((s) => s.status === "running" && s.leased)) return [];
  const open = run.steps.filter((s) => isOpen(s.status)).map((s) => s.id);
  if (run.goalMet) return [{ type: "convert_run", stepIds: open, goal: run.goalMet }];
  return [{ type: "cancel_run", stepIds: open }];
}

/** Follows edges from `fromId` through inline nodes until a step is scheduled or the run ends. */
function walkFrom(graph: Graph, run: RunState, fromId: string, earlier: Command[], label?: EdgeLabel): Command[] {
  const commands: Command[] = [];
  const context = contextOf(run);
  let edge = nextEdge(graph, fromId, label);
  for (let hops = 0; hops < maxInlineHops; hops++) {
    if (edge === undefined) return [...commands, { type: "fail_run", reason: `node ${fromId} has no way forward` }];
    const current = edge.to;
    const split = graph.nodes.find((n) => n.id === edge?.from)?.kind === "split";
    commands.push({ type: "take_edge", from: edge.from, label: edge.label ?? null, to: edge.to, ...(split ? { split: true as const } : {}) });
    const node = graph.nodes.find((n) => n.id === current);
    if (!node) return [...commands, { type: "fail_run", reason: `edge leads to missing node ${current}` }];
    switch (node.kind) {
      case "trigger":
        return [...commands, { type: "fail_run", reason: "an edge leads back into the trigger", nodeId: node.id }];
      case "end":
        return [...commands, { type: "complete_run", nodeId: node.id }];
      case "branch": {
        const result = evaluate(node.config.condition, context);
        commands.push({ type: "record", event: "branch.evaluated", nodeId: node.id, data: { result } });
        edge = nextEdge(graph, node.id, result ? "true" : "false");
        fromId = node.id;
        break;
      }
      case "split": {
        // The path is the contact's (and this step's) for good: a re-walk or a retry takes the same one.
        const trigger = graph.nodes.find((n) => n.kind === "trigger");
        const path = choosePath(node.config, splitSubject(trigger?.kind === "trigger" ? trigger.config : undefined, run.input), node.id);
        commands.push({ type: "record", event: "split.chosen", nodeId: node.id, data: { path } });
        edge = nextEdge(graph, node.id, path);
        fromId = node.id;
        break;
      }
      default:
        if (!isStepKind(kindOf(node.kind))) return [...commands, { type: "fail_run", reason: `node ${node.id} is of an unknown kind "${node.kind}"`, nodeId: node.id }];
        return [...commands, scheduleWithinBudget(node as StepNode, run, [...earlier, ...commands])];
    }
  }
  return [...commands, { type: "fail_run", reason: `passed ${maxInlineHops} inline nodes without a step: a loop with no step` }];
}

type StepNode = Extract<GraphNode, { kind: StepKind }>;

/** The next step, unless the run has executed its step budget: then it stops there, saying so. */
function scheduleWithinBudget(node: StepNode, run: RunState, earlier: Command[]): Command {
  const scheduled = run.steps.length + earlier.filter((c) => c.type === "schedule_step").length;
  if (run.maxSteps !== undefined && run.maxSteps !== null && scheduled >= run.maxSteps) {
    return { type: "fail_run", reason: `step budget: ${scheduled} steps executed, the limit is ${run.maxSteps}`, nodeId: node.id, budget: "steps" };
  }
  return schedule(node, run, earlier);
}

function schedule(node: StepNode, run: RunState, earlier: Command[]): Extract<Command, { type: "schedule_step" }> {
  const previous = Math.max(
    0,
    ...run.steps.filter((s) => s.nodeId === node.id).map((s) => s.iteration),
    ...earlier.flatMap((c) => (c.type === "schedule_step" && c.nodeId === node.id ? [c.iteration] : [])),
  );
  const lane = laneOf(node.kind);
  const module = kindOf(node.kind);
  return {
    type: "schedule_step",
    nodeId: node.id,
    kind: node.kind,
    lane,
    iteration: previous + 1,
    // A wait (timer, reply, approval) is never attempted: it settles by its timer or a signal.
    maxAttempts: !isStepKind(module) || module.waits ? 1 : (module.maxAttempts?.(node.config) ?? lanes[lane].retry.maxAttempts),
  };
}

type EdgeLabel = string;

/** The edge the walk leaves `fromId` by: the one with `label`, or with no label asked for, the node's first. */
function nextEdge(graph: Graph, fromId: string, label: EdgeLabel | undefined): Graph["edges"][number] | undefined {
  return graph.edges.find((e) => e.from === fromId && (label === undefined || e.label === label));
}

function contextOf(run: RunState): WalkContext {
  const steps: WalkContext["steps"] = {};
  const latest = [...run.steps].filter((s) => s.status === "done").sort((a, b) => a.iteration - b.iteration);
  for (const s of latest) steps[s.nodeId] = { output: s.output };
  return { input: run.input, steps };
}

/**
 * A run moved onto `nodeId` by a person (a version migration's "move to this step"): the step to schedule there, as
 * the walk would have scheduled it. Only step kinds (an inline node has no step to wait on).
 */
export function scheduleAt(graph: Graph, run: RunState, nodeId: string): Extract<Command, { type: "schedule_step" }> | null {
  const node = graph.nodes.find((n) => n.id === nodeId);
  if (!node || !isStepKind(kindOf(node.kind))) return null;
  return schedule(node as StepNode, run, []);
}
