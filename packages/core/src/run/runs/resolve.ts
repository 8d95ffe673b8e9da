import { type Db, inTx, type Tx } from "@holdfast/db";
import { stepReady } from "../apply/rows";
import type { LaneName } from "../../base/catalog";
import { advanceLocked } from "../engine/advance";
import { HoldfastError, NotFoundError } from "../../base/errors";
import { effectsDeleteNeedsReview, effectsSettleNeedsReview } from "../../store/sql/effects";
import { outboxInsert } from "../../store/sql/outbox";
import { runEventsInsert } from "../../store/sql/run-events";
import { runsLockForWalk } from "../../store/sql/runs";
import { runsStatus } from "../../store/sql/runs-view";
import { stepsFail } from "../../store/sql/steps";
import { stepsLockOfRun, stepsReadyAgainAfterReview, stepsResumeParkedOfRun, stepsSettleReviewedDone } from "../../store/sql/steps-review";
import type { GraphCache } from "../../versions/graph-cache";

/**
 * What a person does about a run that waits for them. Each action locks the run, checks the step is still in the
 * state the person saw, changes it, records who did what (with their note) on the timeline, and wakes the run, in
 * one transaction. Nothing here claims an outside action was undone: resolving says what a person found out.
 */
export type ReviewAction =
  /** The person checked the provider: it happened. The step is done with their note as its output. */
  | "done"
  /** The person checked: it did not happen. The step runs again with the same effect key. */
  | "retry"
  /** Give up on this step: it fails with the note, and the run stops along with it. */
  | "abandon";

export class ActionRefusedError extends HoldfastError {
  constructor(message: string) {
    super("action_refused", message);
  }
}

interface ParkedStep {
  id: string;
  nodeId: string;
  error: { code?: string; key?: string } | null;
}

async function parkedStep(tx: Tx, orgId: string, runId: string, stepId: string): Promise<ParkedStep> {
  const step = await stepsLockOfRun(tx, orgId, runId, stepId);
  if (!step) throw new NotFoundError("run_not_found", `step ${stepId} of run ${runId}`);
  if (step.status !== "parked" || step.error?.code !== "needs_review") throw new ActionRefusedError(`step ${step.nodeId} is not waiting for a review (it is ${step.status})`);
  return step;
}

export async function resolveNeedsReview(
  db: Db,
  graphs: GraphCache,
  r: { orgId: string; runId: string; stepId: string; action: ReviewAction; note: string; by: string },
): Promise<{ status: string }> {
  const note = r.note.trim();
  if (!note) throw new ActionRefusedError("say what you found (a note is required)");
  return inTx(db, async (tx) => {
    const run = await runsLockForWalk(tx, r.orgId, r.runId);
    if (!run) throw new NotFoundError("run_not_found", `run ${r.runId}`);
    if (run.status !== "running") throw new ActionRefusedError(`the run is ${run.status}`);
    const step = await parkedStep(tx, r.orgId, r.runId, r.stepId);
    const key = step.error?.key ?? null;
    const base = { orgId: r.orgId, runId: r.runId, stepId: step.id, nodeId: step.nodeId, worker: r.by };
    if (r.action === "done") {
      const output = { resolved: "done", note, by: r.by };
      if (key) await effectsSettleNeedsReview(tx, r.orgId, key, output);
      await stepsSettleReviewedDone(tx, step.id, output);
      await runEventsInsert(tx, [{ ...base, type: "review.marked_done", data: { key, note } }]);
      await advanceLocked(tx, graphs, run, r.by);
    } else if (r.action === "retry") {
      // The person found it did not happen: the ledger forgets the uncertain attempt, so the next claim is a first
      // attempt with the same key (a provider that honours the key still answers once).
      if (key) await effectsDeleteNeedsReview(tx, r.orgId, key);
      const lane = await stepsReadyAgainAfterReview(tx, step.id);
      await runEventsInsert(tx, [{ ...base, type: "review.retry", data: { key, note } }]);
      await outboxInsert(tx, [stepReady({ orgId: r.orgId, runId: r.runId, id: step.id, lane: (lane ?? "io") as LaneName })]);
    } else {
      await stepsFail(tx, step.id, { code: "abandoned", message: `abandoned by ${r.by}: ${note}`, key, note });
      await runEventsInsert(tx, [{ ...base, type: "review.abandoned", data: { key, note } }]);
      await advanceLocked(tx, graphs, run, r.by);
    }
    return { status: (await runsStatus(tx, r.runId)) ?? "running" };
  });
}

/**
 * Resumes a run's parked steps (a connection, breaker or budget park) now: each goes back to ready with a wake-up.
 * If the cause is still there the step parks again, with the reason, at no attempt's cost. Steps parked for a review
 * are not resumed here: they need `resolveNeedsReview`.
 */
export async function resumeRun(db: Db, r: { orgId: string; runId: string; by: string }): Promise<{ resumed: number }> {
  return inTx(db, async (tx) => {
    const run = await runsLockForWalk(tx, r.orgId, r.runId);
    if (!run) throw new NotFoundError("run_not_found", `run ${r.runId}`);
    if (run.status !== "running") throw new ActionRefusedError(`the run is ${run.status}`);
    const steps = await stepsResumeParkedOfRun(tx, r.orgId, r.runId);
    if (steps.length === 0) throw new ActionRefusedError("nothing in this run is parked (a step that needs a review is resolved, not resumed)");
    await runEventsInsert(
      tx,
      steps.map((s) => ({ orgId: r.orgId, runId: r.runId, stepId: s.id, nodeId: s.nodeId, type: "step.resumed", worker: r.by, data: { parkedFor: s.reason } })),
    );
    await outboxInsert(
      tx,
      steps.map((s) => stepReady({ orgId: r.orgId, runId: r.runId, id: s.id, lane: s.lane as LaneName })),
    );
    return { resumed: steps.length };
  });
}
