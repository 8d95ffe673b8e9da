import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staleWakeups } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

/** Moves a step's instants `seconds` into the past (the database clock stands; the row ages). */
const age = (stepId: string, seconds: number) =>
  bed.rows(
    `UPDATE steps SET available_at = available_at - make_interval(secs => $2), updated_at = updated_at - make_interval(secs => $2),
       woken_at = woken_at - make_interval(secs => $2) WHERE id = $1`,
    [stepId, seconds],
  );

describe("stale-wakeups", () => {
  it("re-wakes a ready step whose wake-up was lost, once per stale interval; a fresh step and one with an unsent wake-up are left alone", async () => {
    const lost = await bed.start("call");
    const fresh = await bed.start("call");
    await bed.sendOutbox();
    const waiting = await bed.start("call"); // its step.ready is still in the outbox
    await age(lost.stepId, 10);
    await age(waiting.stepId, 10);
    const service = staleWakeups.make({ staleSeconds: 5, batch: 10 });

    expect(await service.runOnce(bed.ctx)).toEqual({ rewoken: 1, steps: [{ orgId: bed.orgId, runId: lost.runId, stepId: lost.stepId }] });
    expect(await bed.rows("SELECT payload->>'stepId' AS step FROM outbox WHERE sent_at IS NULL AND topic = 'step.ready' ORDER BY id")).toEqual([
      { step: waiting.stepId },
      { step: lost.stepId },
    ]);
    expect(await bed.rows("SELECT type, worker FROM run_events WHERE run_id = $1 AND type = 'step.rewoken'", [lost.runId])).toEqual([{ type: "step.rewoken", worker: "sweeper" }]);
    expect(await bed.rows("SELECT status FROM steps WHERE id = ANY($1) ORDER BY id", [[lost.stepId, fresh.stepId]])).toEqual([{ status: "ready" }, { status: "ready" }]);

    // Everything sent and still unclaimed: the step whose wake-up was pending is now the lost one; the re-woken
    // step waits another stale interval since its re-wake.
    await bed.sendOutbox();
    expect((await service.runOnce(bed.ctx)).steps.map((s) => s.stepId)).toEqual([waiting.stepId]);
    await bed.sendOutbox();
    await age(lost.stepId, 10);
    expect((await service.runOnce(bed.ctx)).steps.map((s) => s.stepId)).toEqual([lost.stepId]);
  });

  it("a run being cancelled is not re-woken step by step", async () => {
    await bed.rows("UPDATE steps SET status = 'cancelled' WHERE status = 'ready'");
    const run = await bed.start("call");
    await bed.sendOutbox();
    await bed.rows("UPDATE runs SET cancel_requested_at = now() WHERE id = $1", [run.runId]);
    await age(run.stepId, 60);
    expect(await staleWakeups.make({ staleSeconds: 5 }).runOnce(bed.ctx)).toEqual({ rewoken: 0, steps: [] });
  });
});
