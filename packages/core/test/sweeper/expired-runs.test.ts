import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expiredRuns } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

describe("expired-runs", () => {
  it("wakes a run past its age budget, even while it waits, once per stale interval; a run within its budget is left alone", async () => {
    const old = await bed.start("wait");
    const young = await bed.start("wait");
    await bed.sendOutbox();
    await bed.rows("UPDATE runs SET expires_at = now() - interval '1 second' WHERE id = $1", [old.runId]);
    await bed.rows("UPDATE runs SET expires_at = now() + interval '1 hour' WHERE id = $1", [young.runId]);
    const service = expiredRuns.make({ staleSeconds: 5, batch: 10 });

    expect(await service.runOnce(bed.ctx)).toEqual({ woken: 1, runs: [{ orgId: bed.orgId, runId: old.runId }] });
    expect(await bed.rows("SELECT run_id, topic, payload->>'reason' AS reason FROM outbox WHERE sent_at IS NULL")).toEqual([
      { run_id: old.runId, topic: "run.wake", reason: "sweep" },
    ]);
    // The engine stops it; until then its wake-up is pending and it is not woken again.
    expect((await service.runOnce(bed.ctx)).woken).toBe(0);
    await bed.sendOutbox();
    expect((await service.runOnce(bed.ctx)).woken).toBe(0); // swept within the interval
    await bed.rows("UPDATE runs SET swept_at = swept_at - interval '10 seconds' WHERE id = $1", [old.runId]);
    expect((await service.runOnce(bed.ctx)).runs).toEqual([{ orgId: bed.orgId, runId: old.runId }]);
  });
});
