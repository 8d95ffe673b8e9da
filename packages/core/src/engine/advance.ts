import { type Db, inTx, type Tx } from "@holdfast/db";
import type { RunWake } from "../catalog";
import { requestApproval } from "../approvals/request";
import { holdsWalk } from "../automations/lifecycle";
import { crashpoint } from "../crash";
import { approvalsClose } from "../sql/approvals";
import { outboxInsert, type OutboxRow } from "../sql/outbox";
import { type RunEventRow, runEventsInsert } from "../sql/run-events";
import { type RunRow, runsFinish, runsLockForWalk, runsTouch } from "../sql/runs";
import { type StepRow, stepsCancelOpen, stepsForRun, stepsInsert, stepsMarkAdvanced } from "../sql/steps";
import { signalsAwaitedEmailSkipped, signalsConsumeWaiting, signalsCorrelate } from "../sql/signals";
import { timersInsert } from "../sql/timers";
import { timerFor } from "../timers/plan";
import { unknownZoneEvent } from "../timers/zone-warning";
import { contactsOfRun } from "../sql/contacts";
import type { Graph } from "../versions/graph";
import type { GraphCache } from "../versions/graph-cache";
import { type Command, decide, isOpen, type RunState } from "../walk/walk";

export interface AdvanceResult {
  /** What the walk decided; empty when the wake-up was a duplicate or the run had nothing new. */
  commands: Command["type"][];
  status: RunState["status"] | "missing";
}

/**
 * Handles a run wake-up: locks the run, lets the pure walk decide, and applies its commands with their outbox and
 * timeline rows in one transaction. Repeated or stale wake-ups find nothing new to do and change nothing.
 */
export async function advanceRun(db: Db, graphs: GraphCache, wake: RunWake, actor = "engine"): Promise<AdvanceResult> {
  const result = await inTx(db, async (tx) => {
    const run = await runsLockForWalk(tx, wake.orgId, wake.runId);
    if (!run) return { commands: [], status: "missing" as const };
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
 * The first walk of a run inserted in `tx` (its start, same transaction): it has no steps yet, so nothing is read.
 * The run's first steps, their wake-ups and timeline rows commit with the run row itself; no engine hop.
 */
export function walkStarted(tx: Tx, graph: Graph, run: RunRow, actor: string): Promise<AdvanceResult> {
  return walkAndApply(tx, graph, run, [], actor);
}

async function walkAndApply(tx: Tx, graph: Graph, run: RunRow, steps: StepRow[], actor: string): Promise<AdvanceResult> {
  const state: RunState = {
    id: run.id,
    status: run.status,
    input: run.input,
    cancelRequested: run.cancelRequested,
    steps,
    maxSteps: run.maxSteps ?? null,
    expired: run.expired ?? false,
  };
  let commands = decide(graph, state);
  // Held by its paused automation: nothing is applied, so the walk after Resume decides the same step again.
  if (holdsWalk(run.held ?? false, commands)) return { commands: [], status: "running" };
  const open = steps.some((s) => isOpen(s.status));
  if (commands.length === 0 && !open) {
    // Nothing ready, nothing running, nothing new settled: this run has no way forward. Say so where a person sees it.
    commands = [{ type: "fail_run", reason: "no way forward: no open step and nothing left to walk" }];
  }
  await apply(tx, graph, run, steps, commands, actor);
  return { commands: commands.map((c) => c.type), status: statusAfter(commands) };
}

const notifyRow = (run: RunRow, approvalId: string): OutboxRow => ({
  orgId: run.orgId,
  runId: run.id,
  topic: "approval.notify",
  payload: { orgId: run.orgId, approvalId },
});

function statusAfter(commands: Command[]): RunState["status"] {
  for (const c of commands) {
    if (c.type === "complete_run") return "completed";
    if (c.type === "fail_run") return "failed";
    if (c.type === "cancel_run") return "cancelled";
  }
  return "running";
}

/** Carries out walk commands for a run locked in `tx` (the engine's own walk, and a migration's "move to step"). */
export async function applyCommands(tx: Tx, graph: Graph, run: RunRow, steps: StepRow[], commands: Command[], actor: string): Promise<void> {
  return apply(tx, graph, run, steps, commands, actor);
}

async function apply(tx: Tx, graph: Graph, run: RunRow, steps: StepRow[], commands: Command[], actor: string): Promise<void> {
  if (commands.length === 0) return;
  const base = { orgId: run.orgId, runId: run.id, worker: actor };
  const events: RunEventRow[] = [];
  const outbox: OutboxRow[] = [];
  const advanced: string[] = [];
  for (const c of commands) {
    switch (c.type) {
      case "mark_advanced":
        advanced.push(c.stepId);
        break;
      case "record":
        events.push({ ...base, type: c.event, nodeId: c.nodeId ?? null, data: c.data ?? null });
        break;
      case "schedule_step": {
        const waits = c.kind === "wait" || c.kind === "wait_for_reply" || c.kind === "approval";
        const [step] = await stepsInsert(tx, [{ ...c, orgId: run.orgId, runId: run.id }], waits ? "waiting" : "ready");
        if (!step) break; // already scheduled by an earlier walk of the same settle
        if (c.kind === "approval") {
          const node = graph.nodes.find((n) => n.id === c.nodeId);
          if (node?.kind !== "approval") throw new Error(`node ${c.nodeId} is not an approval`);
          const email = node.config.email ? graph.nodes.find((n) => n.id === node.config.email) : undefined;
          const requested = await requestApproval(tx, run, step, node, c.stage ?? 1, steps, actor, email?.kind === "send_email" ? email : null);
          events.push(...requested.events);
          outbox.push(...requested.outbox);
          break;
        }
        if (waits) {
          // The intent and the instant, computed from the database clock, with its fast-path wake-up.
          const node = graph.nodes.find((n) => n.id === c.nodeId);
          if (node?.kind !== "wait" && node?.kind !== "wait_for_reply") throw new Error(`node ${c.nodeId} is not a wait`);
          const [{ now }] = (await tx.$queryRaw<{ now: Date }[]>`SELECT now() AS now`) as [{ now: Date }];
          // A reply wait's deadline is a timer too: whichever settles the step first (signal or timer) wins.
          // An email that was never sent (skipped: the contact unsubscribed) gets no reply: its deadline is now.
          const notSent = node.kind === "wait_for_reply" ? await signalsAwaitedEmailSkipped(tx, run.orgId, run.id, node.config.replyTo) : null;
          const waitConfig =
            node.kind === "wait"
              ? node.config
              : { rule: { kind: "duration" as const, seconds: notSent === null ? node.config.timeoutSeconds : 0 }, spreadSeconds: 0 };
          // The contact's stored zone decides when the payload names none (or names something that is not a zone).
          const contact = node.kind === "wait" ? await contactsOfRun(tx, run.orgId, run.id) : null;
          const timer = timerFor(waitConfig, run.id, run.input, now, contact?.timeZone ?? null);
          const written = await timersInsert(tx, { ...timer, orgId: run.orgId, runId: run.id, stepId: step.id });
          if (timer.unknownZone !== undefined) events.push(unknownZoneEvent(base, step.id, c.nodeId, timer));
          events.push({
            ...base,
            type: "timer.scheduled",
            stepId: step.id,
            nodeId: c.nodeId,
            data: { timerId: written.id, rule: timer.rule, zone: timer.zone, zoneSource: timer.zoneSource, dueAt: timer.dueAt.toISOString(), spreadOffsetSeconds: timer.spreadOffsetSeconds },
          });
          if (node.kind === "wait_for_reply") {
            // Correlate with the email it waits on; a reply that arrived before the run got here is consumed now.
            const key = await signalsCorrelate(tx, run.orgId, run.id, step.id, node.config.replyTo);
            events.push({ ...base, type: "reply.awaited", stepId: step.id, nodeId: c.nodeId, data: { correlationKey: key } });
            if (notSent !== null) events.push({ ...base, type: "reply.not_expected", stepId: step.id, nodeId: c.nodeId, data: { reason: notSent } });
            // (its run.wake is written by the consume itself)
            if (key) await signalsConsumeWaiting(tx, run.orgId, step.id, "walk");
          }
          break;
        }
        events.push({ ...base, type: "step.scheduled", stepId: step.id, nodeId: c.nodeId, lane: c.lane, data: { iteration: c.iteration } });
        outbox.push({ orgId: run.orgId, runId: run.id, topic: "step.ready", payload: { orgId: run.orgId, runId: run.id, stepId: step.id, lane: c.lane } });
        break;
      }
      case "close_approval": {
        const via = c.status === "approved" || c.status === "rejected" ? "the deadline (default decision)" : "the deadline";
        const owed = await approvalsClose(tx, run.orgId, { stepId: c.stepId }, c.status, "deadline", via);
        outbox.push(...owed.map((id) => notifyRow(run, id)));
        break;
      }
      case "complete_run":
        await runsFinish(tx, run.id, "completed", null);
        events.push({ ...base, type: "run.completed", nodeId: c.nodeId });
        break;
      case "fail_run":
        // A budget stop closes the run's open steps (waits and their timers) as a cancel does.
        if (c.stepIds?.length) await stepsCancelOpen(tx, c.stepIds);
        await runsFinish(tx, run.id, "failed", { reason: c.reason, nodeId: c.nodeId ?? null, ...(c.budget ? { budget: c.budget } : {}) });
        events.push({ ...base, type: "run.failed", nodeId: c.nodeId ?? null, data: { reason: c.reason, ...(c.budget ? { budget: c.budget } : {}) } });
        break;
      case "cancel_run":
        if (c.stepIds.length) await stepsCancelOpen(tx, c.stepIds);
        await runsFinish(tx, run.id, "cancelled", null);
        events.push({ ...base, type: "run.cancelled", data: { cancelledSteps: c.stepIds.length } });
        break;
    }
  }
  if (advanced.length) await stepsMarkAdvanced(tx, advanced);
  if (commands.some((c) => c.type === "fail_run" || c.type === "cancel_run")) {
    // A stopped run closes its open approvals: a later click is refused, and the Slack message says why.
    const owed = await approvalsClose(tx, run.orgId, { runId: run.id }, "cancelled", "run", "the run stopped");
    outbox.push(...owed.map((id) => notifyRow(run, id)));
  }
  if (!commands.some((c) => c.type === "complete_run" || c.type === "fail_run" || c.type === "cancel_run")) {
    await runsTouch(tx, run.id);
  }
  await runEventsInsert(tx, events);
  await outboxInsert(tx, outbox);
}
