import { randomUUID } from "node:crypto";
import { type Db, inTx } from "@holdfast/db";
import { stepReady } from "../apply/rows";
import { effectKey } from "../../providers/effects/keys";
import { NotFoundError } from "../../base/errors";
import { outboxInsert } from "../../store/sql/outbox";
import { runEventsInsert } from "../../store/sql/run-events";
import { automationsLifecycle, type AutomationStatus, type PauseRuns } from "../../store/sql/automations";
import { effectsForgetFailure, effectsLockByKey, type EffectStatus } from "../../store/sql/effects";
import { organisationsSlugById } from "../../store/sql/organisations";
import { runsForRerun, runsLockForRetry, runsReopenFailed, type RunForRetry } from "../../store/sql/runs-retry";
import { stepsFailedAt, stepsReopenFailed } from "../../store/sql/steps-retry";
import { startRun, type StartOutcome } from "../start/start-run";
import { operatorAuth } from "../start/trigger-auth";
import { planStepAt } from "../../decide/walk/plan";
import type { GraphCache } from "../../versions/graph-cache";
import { ActionRefusedError } from "./resolve";

/**
 * What a person can do about a failed run: "Retry from the failed step" (the same run; the failed step gets a new
 * round of attempts with the same effect key, so a provider that honours the key still acts once) and "Run again
 * with the same input" (a new run of the newest published version, linked to the old one by `rerun_of`).
 */

export interface RetryFacts {
  run: Pick<RunForRetry, "status" | "error">;
  automation: { status: AutomationStatus; pauseRuns: PauseRuns | null };
  /** The failed step at the run's failing node, if there is one. */
  step: { nodeId: string } | null;
  /** The step's effect in the ledger (null: none recorded, or the step has no effect). */
  effect: { status: EffectStatus; failed: boolean } | null;
}

export type RetryDecision = { kind: "retry"; forgetEffect: boolean } | { kind: "unchanged" } | { kind: "refuse"; reason: string };

/** Whether a retry from the failed step is safe, and what it must do to the effect ledger. Pure. */
export function decideRetry(f: RetryFacts): RetryDecision {
  // A second click after the first retry went through: the run is running again.
  if (f.run.status === "running") return { kind: "unchanged" };
  if (f.run.status !== "failed") return { kind: "refuse", reason: `only a failed run can be retried; this one is ${f.run.status} (use Run again for a new run)` };
  if (f.automation.status === "archived") return { kind: "refuse", reason: "the automation is archived: restore it before retrying its runs" };
  if (f.automation.status === "paused" && f.automation.pauseRuns === "hold") {
    return { kind: "refuse", reason: "the automation is paused with its runs held: resume it before retrying" };
  }
  if (f.run.error?.budget) {
    return { kind: "refuse", reason: `the run stopped at its ${f.run.error.budget} budget, not at a failed step: use Run again (or raise the budget)` };
  }
  if (!f.step) {
    return { kind: "refuse", reason: `the run failed without a failed step to retry (${f.run.error?.reason ?? "no reason recorded"}): use Run again` };
  }
  if (f.effect?.status === "needs_review") {
    return { kind: "refuse", reason: `the outcome of step ${f.step.nodeId}'s call is uncertain and needs a review: review it first and say whether it happened` };
  }
  if (f.effect?.status === "in_flight") {
    return { kind: "refuse", reason: `step ${f.step.nodeId}'s call may still be in progress: wait a minute and try again` };
  }
  // outcome_unknown is safe to hand back to the ledger: it re-sends with the same key to a provider that
  // deduplicates, and otherwise parks the step for a review before anything is sent twice.
  return { kind: "retry", forgetEffect: f.effect?.status === "settled" && f.effect.failed };
}

export interface RetryOutcome {
  state: "retried" | "already_running";
  stepId: string | null;
  nodeId: string | null;
}

export async function retryFromFailedStep(db: Db, graphs: GraphCache, r: { orgId: string; runId: string; by: string }): Promise<RetryOutcome> {
  return inTx(db, async (tx) => {
    const run = await runsLockForRetry(tx, r.orgId, r.runId);
    if (!run) throw new NotFoundError("run_not_found", `run ${r.runId}`);
    const automation = await automationsLifecycle(tx, r.orgId, run.automationId);
    if (!automation) throw new NotFoundError("automation_not_found", `automation ${run.automationId}`);
    const nodeId = run.error?.nodeId ?? null;
    const step = run.status === "failed" && nodeId ? await stepsFailedAt(tx, r.orgId, r.runId, nodeId) : null;
    const key = step ? effectKey(r.runId, step.nodeId, step.iteration) : null;
    const effect = key ? await effectsLockByKey(tx, r.orgId, key) : null;
    const decision = decideRetry({
      run,
      automation,
      step,
      effect: effect ? { status: effect.status, failed: effect.error !== null } : null,
    });
    if (decision.kind === "refuse") throw new ActionRefusedError(decision.reason);
    if (decision.kind === "unchanged" || !step || !key) return { state: "already_running", stepId: null, nodeId: null };

    if (decision.forgetEffect) await effectsForgetFailure(tx, r.orgId, key);
    // A fresh round of attempts, as many as the step's kind and config allow (what the walk would schedule).
    const graph = await graphs.get(tx, r.orgId, run.versionId);
    const attempts = planStepAt(graph, { id: r.runId, status: "running", input: run.input, cancelRequested: false, steps: [] }, step.nodeId)?.maxAttempts ?? 1;
    if (!(await runsReopenFailed(tx, r.orgId, r.runId))) throw new ActionRefusedError("the run changed while retrying: reload and try again");
    if (!(await stepsReopenFailed(tx, step.id, attempts))) throw new ActionRefusedError("the step changed while retrying: reload and try again");
    await runEventsInsert(tx, [
      {
        orgId: r.orgId,
        runId: r.runId,
        stepId: step.id,
        nodeId: step.nodeId,
        type: "run.retried",
        worker: r.by,
        lane: step.lane,
        data: { key, attempts, previousError: step.error, forgotFailedAnswer: decision.forgetEffect },
      },
    ]);
    await outboxInsert(tx, [stepReady({ orgId: r.orgId, runId: r.runId, id: step.id, lane: step.lane })]);
    return { state: "retried", stepId: step.id, nodeId: step.nodeId };
  });
}

/**
 * Run again with the same input: a new run of the newest published version through the ordinary start (so a paused
 * automation refuses or holds it like a delivery), linked to the old run, with `run.rerun` on the old run's
 * timeline. `requestKey` makes a repeated click find the run the first one started (a fresh one when absent).
 */
export async function rerunRun(db: Db, r: { orgId: string; runId: string; by: string; requestKey?: string }): Promise<StartOutcome> {
  const run = await runsForRerun(db, r.orgId, r.runId);
  if (!run) throw new NotFoundError("run_not_found", `run ${r.runId}`);
  if (run.status === "running") throw new ActionRefusedError("the run is still running: wait for it to finish or stop it, then run it again");
  const automation = await automationsLifecycle(db, r.orgId, run.automationId);
  const orgSlug = await organisationsSlugById(db, r.orgId);
  if (!automation || !orgSlug) throw new NotFoundError("automation_not_found", `automation of run ${r.runId}`);
  const requestKey = (r.requestKey ?? randomUUID()).slice(0, 100);
  return startRun(db, {
    orgSlug,
    automationSlug: automation.slug,
    rawBody: JSON.stringify(run.input),
    body: run.input,
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "rerun",
    auth: operatorAuth,
    rerun: { of: r.runId, by: r.by, requestKey },
  });
}
