import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingTimers } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

describe("missing-timers", () => {
  it("gives a wait whose timer row is gone its timer back, from the node's rule anchored at the step's start", async () => {
    const lost = await bed.start("wait");
    const kept = await bed.start("wait");
    await bed.rows("DELETE FROM timers WHERE run_id = $1", [lost.runId]);

    expect(await missingTimers.make({ batch: 10 }).runOnce(bed.ctx)).toEqual({ recreated: 1 });
    const [timer] = await bed.rows(
      `SELECT t.step_id, t.fired_at, extract(epoch FROM t.due_at - s.created_at)::int AS after FROM timers t JOIN steps s ON s.id = t.step_id WHERE t.run_id = $1`,
      [lost.runId],
    );
    expect(timer).toEqual({ step_id: lost.stepId, fired_at: null, after: 3600 });
    expect(await bed.rows("SELECT worker FROM run_events WHERE run_id = $1 AND type = 'timer.recreated'", [lost.runId])).toEqual([{ worker: "sweeper" }]);
    expect(await bed.rows("SELECT count(*)::int AS n FROM timers WHERE run_id = $1", [kept.runId])).toEqual([{ n: 1 }]);
    expect(await missingTimers.make({ batch: 10 }).runOnce(bed.ctx)).toEqual({ recreated: 0 });
  });

  it("repairs at most a batch per run", async () => {
    const runs = [await bed.start("wait"), await bed.start("wait"), await bed.start("wait")];
    await bed.rows("DELETE FROM timers WHERE run_id = ANY($1)", [runs.map((r) => r.runId)]);
    const service = missingTimers.make({ batch: 2 });
    expect(await service.runOnce(bed.ctx)).toEqual({ recreated: 2 });
    expect(await service.runOnce(bed.ctx)).toEqual({ recreated: 1 });
  });
});
