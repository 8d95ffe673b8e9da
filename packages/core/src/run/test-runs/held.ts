import { type Db, inTx } from "@holdfast/db";
import { stepReady } from "../apply/rows";
import type { LaneName } from "../../base/catalog";
import { outboxInsert } from "../../store/sql/outbox";
import { runEventsInsert } from "../../store/sql/run-events";
import { stepsHeldLock, stepsReleaseHeld } from "../../store/sql/steps-held";
import { testRunsAdvanceClockTo } from "../../store/sql/test-runs";

/**
 * A test run's send held by a sending rule (issue 44: quiet hours, the frequency cap) is a waiting item on its page:
 * "Skip to then" moves the virtual clock to the hold's instant and makes the step due now, with its wake-up and the
 * timeline's test.skipped row, in one transaction. The step then runs as any other: on the virtual clock it is inside
 * the window, so the (simulated) send goes. A second click finds nothing held and changes nothing.
 */
export type HeldSkip = { kind: "skipped"; virtualAt: Date; zone: string } | { kind: "already"; message: string };

/** null: the step is not (or no longer) held by a rule: the caller says what else it may be. */
export async function skipTestHold(db: Db, t: { orgId: string; runId: string; stepId: string; by: string }): Promise<HeldSkip | null> {
  return inTx(db, async (tx) => {
    const held = await stepsHeldLock(tx, t.orgId, t.runId, t.stepId);
    if (!held) return null;
    const until = new Date(held.hold.until);
    await testRunsAdvanceClockTo(tx, t.orgId, t.runId, until);
    if (!(await stepsReleaseHeld(tx, t.orgId, t.stepId))) return { kind: "already", message: "this send is no longer held: the run has moved on" };
    await outboxInsert(tx, [stepReady({ orgId: t.orgId, runId: t.runId, id: t.stepId, lane: held.lane as LaneName })]);
    const zone = held.hold.zone ?? "UTC";
    await runEventsInsert(tx, [
      { orgId: t.orgId, runId: t.runId, stepId: t.stepId, nodeId: held.nodeId, type: "test.skipped", worker: t.by, data: { virtualAt: until.toISOString(), zone, hold: held.hold.rule } },
    ]);
    return { kind: "skipped", virtualAt: until, zone };
  });
}
