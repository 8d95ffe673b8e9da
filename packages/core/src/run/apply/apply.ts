import type { Tx } from "@holdfast/db";
import { requestApproval } from "../../people/approvals/request";
import { approvalsClose } from "../../store/sql/approvals";
import { contactsOfRun } from "../../store/sql/contacts";
import { runNow } from "../../store/sql/test-runs";
import { outboxInsert, type OutboxRow } from "../../store/sql/outbox";
import { type RunEventRow, runEventsInsert } from "../../store/sql/run-events";
import { type RunFinish, type RunRow, runsFinish, runsTouch } from "../../store/sql/runs";
import { signalsAwaitedEmailSkipped, signalsConsumeWaiting, signalsCorrelate } from "../../store/sql/signals";
import { type StepRow, stepsCancelOpen, stepsInsert, stepsMarkAdvanced } from "../../store/sql/steps";
import { timersInsert } from "../../store/sql/timers";
import { timerFor } from "../../decide/timers/plan";
import { unknownZoneEvent } from "../timers/zone-warning";
import type { Graph } from "../../versions/graph";
import type { Command } from "../../decide/walk/plan";
import type { EdgeCount, StepInsert } from "../../store/sql/plan-rows";
import { countChangesInsertEdges } from "../../store/sql/count-changes";
import { prepare, type ScheduledStep } from "./rows";

/** One run's plan: the walk's commands for a run locked in the transaction, with the graph and steps it was made from. */
export interface RunPlan {
  graph: Graph;
  run: RunRow;
  steps: StepRow[];
  commands: Command[];
}

/**
 * The applier's transactional half: carries out a plan (the walk's commands, turned into rows by `prepare`) for a
 * run locked in `tx`, through the table modules, with its outbox and timeline rows in the same transaction. The
 * engine's walk, a start whose first walk waits, cancel, and a migration's "move to this step" all come here.
 */
export function applyPlan(tx: Tx, graph: Graph, run: RunRow, steps: StepRow[], commands: Command[], actor: string): Promise<void> {
  return applyPlans(tx, [{ graph, run, steps, commands }], actor);
}

/**
 * The plans of many runs, each locked in `tx` (the due sweep walking the runs it fired): what needs the database
 * read or written first (a wait's timer, an approval's request, closing approvals or open steps) is done run by run;
 * the rows every plan writes (plain new steps, advanced marks, run updates, timeline and outbox rows) go in one
 * statement per table for all of them, each run's timeline in its walk's order.
 */
export async function applyPlans(tx: Tx, plans: RunPlan[], actor: string): Promise<void> {
  // Rows of a plain new step carry its id (`of`): dropped if the step turns out to exist already.
  const events: { row: RunEventRow; of?: string }[] = [];
  const outbox: { row: OutboxRow; of?: string }[] = [];
  const plain: StepInsert[] = [];
  const advanced: string[] = [];
  const finishes: RunFinish[] = [];
  const touched: string[] = [];
  // The edges a walk took to a step are counted with that step: dropped with it if it exists already.
  const edges: { row: EdgeCount & { orgId: string; runId: string }; of?: string }[] = [];
  for (const { graph, run, steps, commands } of plans) {
    if (commands.length === 0) continue;
    let finished = false;
    let walked: EdgeCount[] = [];
    const taken = (of?: string) => {
      edges.push(...walked.map((e) => ({ row: { ...e, orgId: run.orgId, runId: run.id }, of })));
      walked = [];
    };
    for (const o of prepare(commands, { orgId: run.orgId, runId: run.id, actor })) {
      switch (o.op) {
        case "advanced":
          advanced.push(o.stepId);
          break;
        case "event":
          events.push({ row: o.row });
          break;
        case "edge":
          walked.push(o.edge);
          break;
        case "step": {
          const { step, waitsFor } = o.scheduled;
          if (!waitsFor) {
            taken(step.id);
            plain.push(step);
            events.push(...o.scheduled.events.map((row) => ({ row, of: step.id })));
            outbox.push(...o.scheduled.outbox.map((row) => ({ row, of: step.id })));
            break;
          }
          // A wait's timer or approval refers to its step: inserted now (not when an earlier walk of the same settle did).
          if (await insertWait(tx, { graph, run, steps, commands }, o.scheduled, actor, { events, outbox })) taken();
          walked = [];
          break;
        }
        case "close_approval": {
          const via = o.status === "approved" || o.status === "rejected" ? "the deadline (default decision)" : "the deadline";
          const owed = await approvalsClose(tx, run.orgId, { stepId: o.stepId }, o.status, "deadline", via);
          outbox.push(...owed.map((id) => ({ row: notifyRow(run, id) })));
          break;
        }
        case "finish": {
          const f = o.finish;
          // A cancel or a budget stop closes the run's open steps (waits and their timers) with it.
          if (f.closeSteps.length) await stepsCancelOpen(tx, f.closeSteps);
          finishes.push({ runId: run.id, status: f.status, error: f.error });
          events.push({ row: f.event });
          taken();
          finished = true;
          break;
        }
      }
    }
    if (commands.some((c) => c.type === "fail_run" || c.type === "cancel_run" || c.type === "convert_run")) {
      // A stopped run closes its open approvals: a later click is refused, and the Slack message says why.
      const owed = await approvalsClose(tx, run.orgId, { runId: run.id }, "cancelled", "run", "the run stopped");
      outbox.push(...owed.map((id) => ({ row: notifyRow(run, id) })));
    }
    taken();
    if (!finished) touched.push(run.id);
  }
  const inserted = new Set<string>();
  for (const part of chunks(plain)) for (const s of await stepsInsert(tx, part)) inserted.add(s.id);
  const kept = (r: { of?: string }) => r.of === undefined || inserted.has(r.of);
  if (advanced.length) await stepsMarkAdvanced(tx, advanced);
  await runsFinish(tx, finishes);
  await runsTouch(tx, touched);
  for (const part of chunks(events.filter(kept).map((e) => e.row))) await runEventsInsert(tx, part);
  for (const part of chunks(outbox.filter(kept).map((o) => o.row))) await outboxInsert(tx, part);
  for (const part of chunks(edges.filter(kept).map((e) => e.row), 10_000)) await countChangesInsertEdges(tx, part);
}

/** A wait step, inserted with its timer or its approval's request; false when it exists already. */
async function insertWait(
  tx: Tx,
  { graph, run, steps }: RunPlan,
  scheduled: ScheduledStep,
  actor: string,
  into: { events: { row: RunEventRow }[]; outbox: { row: OutboxRow }[] },
): Promise<boolean> {
  const { step, waitsFor } = scheduled;
  const [inserted] = await stepsInsert(tx, [step]);
  if (!inserted || !waitsFor) return false;
  into.events.push(...scheduled.events.map((row) => ({ row })));
  into.outbox.push(...scheduled.outbox.map((row) => ({ row })));
  if (waitsFor.kind === "approval") {
    const node = graph.nodes.find((n) => n.id === step.nodeId);
    if (node?.kind !== "approval") throw new Error(`node ${step.nodeId} is not an approval`);
    const email = node.config.email ? graph.nodes.find((n) => n.id === node.config.email) : undefined;
    const requested = await requestApproval(tx, run, step, node, waitsFor.stage, steps, actor, email?.kind === "send_email" ? email : null);
    into.events.push(...requested.events.map((row) => ({ row })));
    into.outbox.push(...requested.outbox.map((row) => ({ row })));
  } else {
    const base = { orgId: run.orgId, runId: run.id, worker: actor };
    into.events.push(...(await scheduleWaitTimer(tx, graph, run, scheduled, base)).map((row) => ({ row })));
  }
  return true;
}

/** A batch's rows in statements of at most 2,000: PostgreSQL takes 65,535 parameters a statement, these bind 9 a row. */
function chunks<T>(rows: T[], size = 2_000): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < rows.length; i += size) parts.push(rows.slice(i, i + size));
  return parts;
}

const notifyRow = (run: RunRow, approvalId: string): OutboxRow => ({
  orgId: run.orgId,
  runId: run.id,
  topic: "approval.notify",
  payload: { orgId: run.orgId, approvalId },
});

/**
 * A wait step's timer: the intent and the instant, computed from the database clock, with its fast-path wake-up. A
 * reply wait's deadline is a timer too: whichever settles the step first (signal or timer) wins.
 */
async function scheduleWaitTimer(
  tx: Tx,
  graph: Graph,
  run: RunRow,
  scheduled: ScheduledStep,
  base: { orgId: string; runId: string; worker: string },
): Promise<RunEventRow[]> {
  const { step } = scheduled;
  const events: RunEventRow[] = [];
  const node = graph.nodes.find((n) => n.id === step.nodeId);
  if (node?.kind !== "wait" && node?.kind !== "wait_for_reply") throw new Error(`node ${step.nodeId} is not a wait`);
  const now = await runNow(tx, run);
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
  if (timer.unknownZone !== undefined) events.push(unknownZoneEvent(base, step.id, step.nodeId, timer));
  events.push({
    ...base,
    type: "timer.scheduled",
    stepId: step.id,
    nodeId: step.nodeId,
    data: { timerId: written.id, rule: timer.rule, zone: timer.zone, zoneSource: timer.zoneSource, dueAt: timer.dueAt.toISOString(), spreadOffsetSeconds: timer.spreadOffsetSeconds },
  });
  if (node.kind === "wait_for_reply") {
    // Correlate with the email it waits on; a reply that arrived before the run got here is consumed now.
    const key = await signalsCorrelate(tx, run.orgId, run.id, step.id, node.config.replyTo);
    events.push({ ...base, type: "reply.awaited", stepId: step.id, nodeId: step.nodeId, data: { correlationKey: key } });
    if (notSent !== null) events.push({ ...base, type: "reply.not_expected", stepId: step.id, nodeId: step.nodeId, data: { reason: notSent } });
    // (its run.wake is written by the consume itself)
    if (key) await signalsConsumeWaiting(tx, run.orgId, step.id, "walk");
  }
  return events;
}
