import { type Db, inTx } from "@holdfast/db";
import { NotFoundError } from "../../base/errors";
import { requestCancel } from "./cancel";
import { ActionRefusedError } from "./resolve";
import { automationHistoryInsert } from "../../store/sql/automation-history";
import { automationsLifecycle } from "../../store/sql/automations";
import { databaseNow } from "../../store/sql/database";
import { runsCountRunning, runsRunningBatch } from "../../store/sql/runs-of-automation";
import type { GraphCache } from "../../versions/graph-cache";

/**
 * Stop all runs of an automation (of one version when given): a count first, then a confirmed cancel of each
 * through `requestCancel`, the same path as one run's Cancel (a run with an effect in flight stops when it settles),
 * one transaction per run, in id-ordered batches so a large automation never holds one long transaction. It stops the
 * runs started by the moment it began (database clock), not those a still-active automation starts meanwhile.
 */

export const stopBatchSize = 100;

export async function countRunsToStop(db: Db, orgId: string, automationId: string, version: number | null = null): Promise<number> {
  return runsCountRunning(db, orgId, automationId, version);
}

export interface StopOutcome {
  /** Cancelled at once (nothing in flight). */
  cancelled: number;
  /** An effect was in flight: each stops when it settles. */
  requested: number;
  /** Finished on their own between the count and the cancel. */
  alreadyFinished: number;
}

export async function stopAllRuns(
  db: Db,
  graphs: GraphCache,
  r: { orgId: string; automationId: string; version?: number | null; reason: string; by: string },
): Promise<StopOutcome> {
  const reason = r.reason.trim();
  if (!reason) throw new ActionRefusedError("say why the runs are being stopped (a reason is required)");
  if (reason.length > 500) throw new ActionRefusedError("keep the reason under 500 characters");
  const automation = await automationsLifecycle(db, r.orgId, r.automationId);
  if (!automation) throw new NotFoundError("automation_not_found", `automation ${r.automationId}`);
  const version = r.version ?? null;
  const outcome: StopOutcome = { cancelled: 0, requested: 0, alreadyFinished: 0 };
  // The runs running when the stop began (database clock): one started while it works is not part of what was asked.
  const startedBy = await databaseNow(db);
  let after = "";
  for (;;) {
    const batch = await runsRunningBatch(db, r.orgId, r.automationId, version, after, stopBatchSize, startedBy);
    for (const run of batch) {
      const result = await requestCancel(db, graphs, r.orgId, run.id, reason, r.by);
      if (result.state === "cancelled") outcome.cancelled++;
      else if (result.state === "requested") outcome.requested++;
      else outcome.alreadyFinished++;
    }
    if (batch.length < stopBatchSize) break;
    after = batch[batch.length - 1]!.id;
  }
  await inTx(db, (tx) =>
    automationHistoryInsert(tx, r.orgId, r.automationId, {
      by: r.by,
      action: "stop_runs",
      fromStatus: automation.status,
      toStatus: automation.status,
      pauseMode: automation.pauseMode,
      pauseRuns: automation.pauseRuns,
      reason,
      detail: { ...outcome, version },
    }),
  );
  return outcome;
}
