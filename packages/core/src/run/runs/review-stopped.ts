import { type Db, inTx } from "@holdfast/db";
import { NotFoundError } from "../../base/errors";
import { effectsSettleReviewed } from "../../store/sql/effects";
import { runEventsInsert } from "../../store/sql/run-events";
import { runsLockForWalk } from "../../store/sql/runs";
import { ActionRefusedError } from "./resolve";

/**
 * A cancelled run can leave a call whose outcome nobody knows (the provider gave no definite answer, the step was
 * parked for a review, or the worker died mid-call before the cancel took). Such a run stays in the needs-review
 * list until a person checks at the provider and says what they found; nothing is sent again (the run is over).
 * Each answer locks the run, settles the effect with the note, and writes who found what on the timeline, in one
 * transaction.
 */
export async function reviewStoppedRunEffect(
  db: Db,
  r: { orgId: string; runId: string; key: string; happened: boolean; note: string; by: string },
): Promise<{ stepId: string | null }> {
  const note = r.note.trim();
  if (!note) throw new ActionRefusedError("say what you found (a note is required)");
  return inTx(db, async (tx) => {
    const run = await runsLockForWalk(tx, r.orgId, r.runId);
    if (!run) throw new NotFoundError("run_not_found", `run ${r.runId}`);
    // Stopped with a call's outcome unknown: cancelled, or ended at its goal (converted), the same safe point.
    if (run.status !== "cancelled" && run.status !== "converted") {
      throw new ActionRefusedError(`the run is ${run.status}: ${run.status === "running" ? "resolve its step that needs a review" : "retry it to settle the call"}`);
    }
    const settled = await effectsSettleReviewed(tx, r.orgId, r.runId, r.key, { happened: r.happened, note, by: r.by });
    if (!settled) throw new ActionRefusedError(`the call ${r.key} is not waiting for a review (someone may have answered already): reload the page`);
    await runEventsInsert(tx, [
      {
        orgId: r.orgId,
        runId: r.runId,
        stepId: settled.stepId,
        nodeId: settled.nodeId,
        type: r.happened ? "review.marked_done" : "review.not_performed",
        worker: r.by,
        data: { key: r.key, note },
      },
    ]);
    return { stepId: settled.stepId };
  });
}
