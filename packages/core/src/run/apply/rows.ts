import { randomFillSync } from "node:crypto";
import { v7 as uuidv7 } from "uuid";
import type { LaneName } from "../../base/catalog";
import { isStepKind, kindOf } from "../../versions/kinds/registry";
import type { OutboxRow } from "../../store/sql/outbox";
import type { RunEventRow } from "../../store/sql/run-events";
import type { EdgeCount, PlanRows, StepInsert } from "../../store/sql/plan-rows";
import type { Decision } from "../../versions/graph";
import type { Command } from "../../decide/walk/plan";

/**
 * The applier's first half, pure: a plan (the walk's commands) becomes the rows to write. The second half executes
 * them: inside the engine's transaction through the table modules (run/apply/apply.ts), or, when every row is known
 * without reading the database, as JSON handed to one stored function that inserts what it is given
 * (holdfast_rows_insert, called by holdfast_run_start and holdfast_step_settle). Either way a command is turned into
 * rows here and nowhere else.
 */

/** A step and what it brings: its timeline and wake-up rows, and for a wait what the transaction adds. */
export interface ScheduledStep {
  step: StepInsert;
  events: RunEventRow[];
  outbox: OutboxRow[];
  /** A wait is settled by its timer (or a signal), an approval by a person: both need the database (apply.ts). */
  waitsFor: null | { kind: "timer" } | { kind: "approval"; stage: number };
}

/** How the run ends, with its timeline row. */
export interface Finish {
  status: "completed" | "failed" | "cancelled" | "converted";
  error: Record<string, unknown> | null;
  event: RunEventRow;
  /** Open steps to close with it (a cancel, a budget stop): the transaction's to do. */
  closeSteps: string[];
}

/** The plan as rows, in the walk's order (the timeline follows it). */
export type Op =
  | { op: "advanced"; stepId: string }
  | { op: "event"; row: RunEventRow }
  | { op: "step"; scheduled: ScheduledStep }
  | { op: "close_approval"; stepId: string; status: "escalated" | "expired" | Decision }
  | { op: "finish"; finish: Finish }
  | { op: "edge"; edge: EdgeCount };

export interface RowContext {
  orgId: string;
  runId: string;
  /** Who applies it, for the timeline: "engine", "start", a worker id, "user:<email>". */
  actor: string;
  /**
   * Local dispatch: the first step the plan schedules on this lane is inserted already claimed by the settling
   * worker (attempt 1, its lease), so the worker runs it next with no queue hop and no claim of its own.
   */
  claim?: { lane: LaneName; leaseMs: number } | null;
}

/**
 * Run and step ids: the prefix and a UUID version 7 (RFC 9562) without dashes: the clock's milliseconds first, then
 * random bits (a counter within one millisecond, so one process's ids strictly ascend). Ids made one after the other
 * sort one after the other, so each insert into the indexes keyed by them (the primary keys, (org_id, id), the
 * (run_id, ...) keys, an effect's key, which starts with its run id) lands beside the last one instead of on a random
 * page: on a large database a random key meant a page nobody had touched since the last checkpoint, written whole to
 * the WAL and read from disk (docs/performance.md, "Cost as data grows"). Rows inserted without an id (timers) get a
 * UUID version 7 too, from the database's holdfast_ordered_id. Ids are names, not secrets (docs/security.md).
 */
export const newStepId = (): string => `stp_${orderedUuid().replaceAll("-", "")}`;
export const newRunId = (): string => `run_${orderedUuid().replaceAll("-", "")}`;

/**
 * uuid's v7 with its random bytes cut from a pool filled 4 KiB at a time: the library asks the system for 16 bytes
 * at each id (`crypto.getRandomValues`, about 5 us of CPU each here, against 0.2 us for node's pooled randomUUID).
 * The clock and the counter are kept here as uuid keeps them when it draws its own bytes (its updateV7State): a new
 * millisecond starts the counter at random, the same millisecond counts on, a full counter borrows the next one.
 */
const randomPool = new Uint8Array(4096);
let poolAt = randomPool.length;
const v7State = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };
function orderedUuid(): string {
  if (poolAt + 16 > randomPool.length) {
    randomFillSync(randomPool);
    poolAt = 0;
  }
  const random = randomPool.subarray(poolAt, (poolAt += 16));
  const now = Date.now();
  if (now > v7State.msecs) {
    // 31 random bits, as uuid's v7Sequence: room to count on within the millisecond.
    v7State.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    v7State.msecs = now;
  } else {
    v7State.seq = (v7State.seq + 1) | 0;
    if (v7State.seq === 0) v7State.msecs++;
  }
  return uuidv7({ random, msecs: v7State.msecs, seq: v7State.seq });
}

/** The one `step.ready` wake-up: a lane worker's queue message for a step (a new step, a retry, a resume). */
export function stepReady(step: { orgId: string; runId: string; id: string; lane: LaneName }, delayMs?: number): OutboxRow {
  return {
    orgId: step.orgId,
    runId: step.runId,
    topic: "step.ready",
    payload: { orgId: step.orgId, runId: step.runId, stepId: step.id, lane: step.lane },
    ...(delayMs ? { delayMs } : {}),
  };
}

type ScheduleCommand = Extract<Command, { type: "schedule_step" }>;

/**
 * What happens when a step is scheduled, on every path (start, engine, a worker's settle, a migration's move): its
 * row, its timeline row and its wake-up. A wait is inserted waiting, with no wake-up (its timer or approval follows
 * in the transaction); a step claimed by the settling worker (local dispatch) is inserted running under its lease,
 * with no timeline row of its own and no wake-up: the settle's own row says it (data.chained, holdfast_step_settle), and
 * the timeline's reader shows it as the step's step.claimed (store/sql/run-events.ts runEventsForRun).
 */
export function scheduleStep(c: ScheduleCommand, at: RowContext, claimed = false): ScheduledStep {
  const base = { orgId: at.orgId, runId: at.runId, worker: at.actor };
  const module = kindOf(c.kind);
  const waits = isStepKind(module) && module.waits;
  const step: StepInsert = {
    id: newStepId(),
    orgId: at.orgId,
    runId: at.runId,
    nodeId: c.nodeId,
    iteration: c.iteration,
    kind: c.kind,
    lane: c.lane,
    maxAttempts: c.maxAttempts,
    status: waits ? "waiting" : claimed ? "running" : "ready",
  };
  if (waits) return { step, events: [], outbox: [], waitsFor: c.kind === "approval" ? { kind: "approval", stage: c.stage ?? 1 } : { kind: "timer" } };
  if (claimed && at.claim) {
    // Scheduled and claimed in one instant by the worker whose settle writes it: the settle's own timeline row
    // carries the claim (two rows fewer a chained step than step.scheduled and step.claimed, the hottest write).
    Object.assign(step, { owner: at.actor, attempt: 1, leaseMs: at.claim.leaseMs });
    return { step, events: [], outbox: [], waitsFor: null };
  }
  const scheduled: RunEventRow = { ...base, type: "step.scheduled", stepId: step.id, nodeId: c.nodeId, lane: c.lane, data: { iteration: c.iteration } };
  return { step, events: [scheduled], outbox: [stepReady(step)], waitsFor: null };
}

/**
 * An edge the walk took as its journey count: one run into 'edge:<label or ''>:<to>' at the edge's from node, naming
 * the run only when the edge leaves a split.
 */
export function edgeCount(c: Extract<Command, { type: "take_edge" }>): EdgeCount {
  return { nodeId: c.from, bucket: `edge:${c.label ?? ""}:${c.to}`, run: c.split === true };
}

/** The walk's commands as rows, in order. */
export function prepare(commands: Command[], at: RowContext): Op[] {
  const base = { orgId: at.orgId, runId: at.runId, worker: at.actor };
  let claiming = at.claim ?? null;
  const ops: Op[] = [];
  for (const c of commands) {
    switch (c.type) {
      case "mark_advanced":
        ops.push({ op: "advanced", stepId: c.stepId });
        break;
      case "record":
        ops.push({ op: "event", row: { ...base, type: c.event, nodeId: c.nodeId ?? null, data: c.data ?? null } });
        break;
      case "schedule_step": {
        const claimed = claiming !== null && c.lane === claiming.lane;
        if (claimed) claiming = null;
        ops.push({ op: "step", scheduled: scheduleStep(c, at, claimed) });
        break;
      }
      case "close_approval":
        ops.push({ op: "close_approval", stepId: c.stepId, status: c.status });
        break;
      case "take_edge":
        ops.push({ op: "edge", edge: edgeCount(c) });
        break;
      case "complete_run":
        ops.push({ op: "finish", finish: { status: "completed", error: null, closeSteps: [], event: { ...base, type: "run.completed", nodeId: c.nodeId } } });
        break;
      case "fail_run": {
        const reason = { reason: c.reason, ...(c.budget ? { budget: c.budget } : {}) };
        ops.push({
          op: "finish",
          finish: {
            status: "failed",
            error: { reason: c.reason, nodeId: c.nodeId ?? null, ...(c.budget ? { budget: c.budget } : {}) },
            closeSteps: c.stepIds ?? [],
            event: { ...base, type: "run.failed", nodeId: c.nodeId ?? null, data: reason },
          },
        });
        break;
      }
      case "cancel_run":
        ops.push({
          op: "finish",
          finish: { status: "cancelled", error: null, closeSteps: c.stepIds, event: { ...base, type: "run.cancelled", data: { cancelledSteps: c.stepIds.length } } },
        });
        break;
      case "convert_run":
        ops.push({
          op: "finish",
          finish: {
            status: "converted",
            error: null,
            closeSteps: c.stepIds,
            event: { ...base, type: "run.converted", data: { goal: c.goal, closedSteps: c.stepIds.length } },
          },
        });
        break;
    }
  }
  return ops;
}

/**
 * The rows of a plan that needs nothing read from the database, or null when one of them does (a wait's timer from
 * the database clock, an approval's request, an approval to close, open steps to cancel): then the plan is applied in
 * the engine's transaction instead. A run that stops here has no open step, so no pending approval to close.
 */
export function statementRows(ops: Op[], effectKinds: readonly string[]): PlanRows | null {
  const rows: PlanRows = { steps: [], events: [], outbox: [], finish: null, advanced: [], claim: null, edges: [] };
  for (const o of ops) {
    switch (o.op) {
      case "advanced":
        rows.advanced.push(o.stepId);
        break;
      case "event":
        rows.events.push(o.row);
        break;
      case "edge":
        rows.edges?.push(o.edge);
        break;
      case "step": {
        const { step, events, outbox, waitsFor } = o.scheduled;
        if (waitsFor) return null;
        rows.steps.push(step);
        rows.events.push(...events);
        rows.outbox.push(...outbox);
        if (step.status === "running") {
          rows.claim = { stepId: step.id, nodeId: step.nodeId, iteration: step.iteration, kind: step.kind, leaseMs: step.leaseMs ?? 0, effect: effectKinds.includes(step.kind) };
        }
        break;
      }
      case "close_approval":
        return null;
      case "finish":
        if (o.finish.closeSteps.length > 0 || o.finish.status === "cancelled" || o.finish.status === "converted") return null;
        rows.finish = { status: o.finish.status, error: o.finish.error };
        rows.events.push(o.finish.event);
        break;
    }
  }
  return rows;
}
