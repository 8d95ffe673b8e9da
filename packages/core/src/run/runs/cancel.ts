import { type Db, inTx } from "@holdfast/db";
import { NotFoundError } from "../../base/errors";
import { advanceLocked } from "../engine/advance";
import { runEventsInsert } from "../../store/sql/run-events";
import { runsLockForWalk, runsRequestCancel } from "../../store/sql/runs";
import type { GraphCache } from "../../versions/graph-cache";

export interface CancelOutcome {
  /** "cancelled": done now; "requested": an effect is in flight, the run stops when it settles. */
  state: "cancelled" | "requested" | "already_finished";
  status: string;
}

/**
 * Requests cancellation. A waiting run (nothing in flight) is cancelled in the same transaction. A run with an
 * effect in flight is cancelled at the next safe point: the walk checks the request before scheduling anything,
 * and the lane workers refuse to claim steps of a run being cancelled.
 */
export async function requestCancel(
  db: Db,
  graphs: GraphCache,
  orgId: string,
  runId: string,
  reason: string,
  by: string,
): Promise<CancelOutcome> {
  return inTx(db, async (tx) => {
    const run = await runsLockForWalk(tx, orgId, runId);
    if (!run) throw new NotFoundError("run_not_found", `run ${runId}`);
    if (run.status !== "running") return { state: "already_finished", status: run.status };
    if (!run.cancelRequested) {
      await runsRequestCancel(tx, orgId, runId, reason);
      await runEventsInsert(tx, [{ orgId, runId, type: "run.cancel_requested", worker: by, data: { reason } }]);
    }
    const result = await advanceLocked(tx, graphs, { ...run, cancelRequested: true }, by);
    return { state: result.status === "cancelled" ? "cancelled" : "requested", status: result.status };
  });
}
