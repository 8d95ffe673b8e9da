import { type Db, inTx } from "@holdfast/db";
import { NotFoundError } from "../../base/errors";
import { advanceLocked } from "../engine/advance";
import { kindOf } from "../../versions/kinds/registry";
import { automationHistoryInsert } from "../../store/sql/automation-history";
import { automationsLifecycle } from "../../store/sql/automations";
import { runsLockForWalk } from "../../store/sql/runs";
import { type StepTimer, timersFireNow, timersOfRunSteps } from "../../store/sql/timers";
import type { GraphCache } from "../../versions/graph-cache";
import { fireableWaitKinds } from "./fire-wait-words";
import { ActionRefusedError } from "./resolve";

/**
 * "Fire this wait now": a person ends a run's wait before its time, with a reason. The step's timer fires through
 * the sweeper's own statement (store/sql/timers.ts timersFireNow: the wait settles, the timeline gets timer.fired, with who
 * and why) and the run is walked on in the same transaction, as the due sweep walks the runs it fired; the next step
 * then runs as any other, an effect through the ledger. The automation's history records it in that transaction too.
 *
 * One firing however many clicks: the run's row is locked first (the engine's lock), so concurrent calls go one after
 * the other, and each after the first finds the timer fired and reads back when, by whom and why. A test run goes the
 * same way (its effects are its simulators', as ever).
 */

export interface FireWaitRequest {
  orgId: string;
  runId: string;
  /** The waiting step; else the latest step of `nodeId`; else the run's one waiting wait. */
  stepId?: string | undefined;
  nodeId?: string | undefined;
  /** Who: "user:<email>", "cli:<login>". */
  by: string;
  reason: string;
}

export type FireWaitOutcome =
  | { kind: "fired"; runId: string; stepId: string; nodeId: string; dueAt: Date; firedAt: Date; status: string }
  | {
      kind: "already_fired";
      runId: string;
      stepId: string;
      nodeId: string;
      dueAt: Date;
      firedAt: Date;
      firedBy: string;
      /** early: a person fired it (reason says why); due: it fired at its time. */
      how: "early" | "due";
      reason: string | null;
    };

export async function fireWaitNow(db: Db, graphs: GraphCache, r: FireWaitRequest): Promise<FireWaitOutcome> {
  const reason = r.reason.trim();
  if (!reason) throw new ActionRefusedError("say why the wait is fired early (a reason is required)");
  if (reason.length > 500) throw new ActionRefusedError("keep the reason under 500 characters");
  return inTx(db, async (tx) => {
    // The engine's lock: a second click waits here for the first to commit, then reads what it did.
    const run = await runsLockForWalk(tx, r.orgId, r.runId);
    if (!run) throw new NotFoundError("run_not_found", `run ${r.runId}`);
    const steps = await timersOfRunSteps(tx, r.orgId, r.runId, { stepId: r.stepId, nodeId: r.nodeId });
    const step = pick(steps, r);
    const kind = kindOf(step.kind);
    if (!fireableWaitKinds.includes(step.kind) || !step.timerId || !step.dueAt) {
      throw new ActionRefusedError(`"${step.nodeId}" is ${kind ? `a ${kind.label} step` : `a ${step.kind} step`}, not a wait: only a Wait or a Wait for reply can be fired now`);
    }
    if (step.firedAt) return alreadyFired(r.runId, step);
    if (run.status !== "running") throw new ActionRefusedError(`the run has ${run.status === "cancelled" ? "been cancelled" : `finished (${run.status})`}: there is no wait to fire`);
    if (step.status !== "waiting") throw new ActionRefusedError(`the run is not waiting at "${step.nodeId}" (that step is ${step.status})`);
    const fired = await timersFireNow(tx, r.orgId, step.stepId, r.by, reason);
    if (!fired[0]) {
      // A reply (or the run's stop) closed the wait between our read and the firing: say what did.
      const [now] = await timersOfRunSteps(tx, r.orgId, r.runId, { stepId: step.stepId });
      if (now?.firedAt) return alreadyFired(r.runId, now);
      throw new ActionRefusedError(`the wait at "${step.nodeId}" could not be fired: try again`);
    }
    const walk = await advanceLocked(tx, graphs, run, r.by);
    const [after] = await timersOfRunSteps(tx, r.orgId, r.runId, { stepId: step.stepId });
    const automation = await automationsLifecycle(tx, r.orgId, run.automationId);
    if (automation) {
      await automationHistoryInsert(tx, r.orgId, run.automationId, {
        by: r.by,
        action: "fire_wait",
        fromStatus: automation.status,
        toStatus: automation.status,
        pauseMode: automation.pauseMode,
        pauseRuns: automation.pauseRuns,
        reason,
        detail: { runId: r.runId, stepId: step.stepId, nodeId: step.nodeId, dueAt: step.dueAt.toISOString() },
      });
    }
    return {
      kind: "fired",
      runId: r.runId,
      stepId: step.stepId,
      nodeId: step.nodeId,
      dueAt: step.dueAt,
      firedAt: after?.firedAt ?? new Date(),
      status: walk.status,
    };
  });
}

function pick(steps: StepTimer[], r: FireWaitRequest): StepTimer {
  if (r.stepId || r.nodeId) {
    // Newest first: a node visited twice (a loop) is fired at its latest visit.
    const step = steps[0];
    if (!step) throw new ActionRefusedError(`this run has no step ${r.stepId ? r.stepId : `"${r.nodeId}"`}`);
    return step;
  }
  const waits = steps.filter((s) => fireableWaitKinds.includes(s.kind) && s.timerId);
  const waiting = waits.filter((s) => s.status === "waiting" && !s.firedAt);
  if (waiting.length > 1) throw new ActionRefusedError(`the run waits at ${waiting.map((s) => `"${s.nodeId}"`).join(" and ")}: say which step`);
  const step = waiting[0] ?? waits[0];
  if (!step) throw new ActionRefusedError("this run has no wait step to fire");
  return step;
}

/** A wait that ended already: read back when and by whom, or refused when a reply or the run's stop ended it. */
function alreadyFired(runId: string, s: StepTimer): FireWaitOutcome {
  const firedAt = s.firedAt as Date;
  if (s.firedBy === "signal") throw new ActionRefusedError(`a reply ended the wait at "${s.nodeId}" at ${firedAt.toISOString()}: the run took its reply path`);
  if (s.firedBy === "cancelled") throw new ActionRefusedError(`the wait at "${s.nodeId}" was closed when the run stopped: there is no wait to fire`);
  const how = s.firedReason !== null ? "early" : "due";
  return { kind: "already_fired", runId, stepId: s.stepId, nodeId: s.nodeId, dueAt: s.dueAt as Date, firedAt, firedBy: s.firedBy ?? "someone", how, reason: s.firedReason };
}
