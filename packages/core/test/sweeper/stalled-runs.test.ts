import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stepsClaimIfLeaseFree } from "../../src/store/sql/steps-claim";
import { stepsSettleIfToken } from "../../src/store/sql/steps-settle";
import { stalledRuns } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";
import { effectKinds } from "../../src/versions/kinds/registry";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

/** A run whose only step a worker settled (`done`, or `parked` for a person) and whose run.wake was then lost. */
async function settled(status: "done" | "parked") {
  const run = await bed.start("call");
  const claimed = await stepsClaimIfLeaseFree(bed.t.sql, run.stepId, "w1", 30_000, effectKinds());
  if (!claimed) throw new Error("no claim");
  const error = status === "parked" ? { code: "authorisation", message: "The connection's login was refused: reconnect it in Settings." } : null;
  await stepsSettleIfToken(bed.t.sql, { step: claimed, worker: "w1", status, output: {}, error });
  await bed.sendOutbox();
  return run;
}

/** Moves the run's and its steps' instants `seconds` into the past. */
async function age(runId: string, seconds: number) {
  await bed.rows(
    "UPDATE runs SET updated_at = updated_at - make_interval(secs => $2), swept_at = swept_at - make_interval(secs => $2) WHERE id = $1",
    [runId, seconds],
  );
  await bed.rows("UPDATE steps SET updated_at = updated_at - make_interval(secs => $2) WHERE run_id = $1", [runId, seconds]);
}

describe("stalled-runs", () => {
  it("wakes a quiet run with no open step (its settled step's run.wake was lost), once per stale interval", async () => {
    const run = await settled("done");
    const recent = await settled("done"); // quiet for less than the interval
    await age(run.runId, 10);
    await age(recent.runId, 1);
    const service = stalledRuns.make({ staleSeconds: 5, batch: 10 });

    expect(await service.runOnce(bed.ctx)).toEqual({ rewoken: 1, runs: [{ orgId: bed.orgId, runId: run.runId }] });
    expect(await bed.rows("SELECT topic, payload->>'reason' AS reason FROM outbox WHERE run_id = $1 AND sent_at IS NULL", [run.runId])).toEqual([
      { topic: "run.wake", reason: "sweep" },
    ]);
    expect(await bed.rows("SELECT swept_at IS NOT NULL AS swept FROM runs WHERE id = $1", [run.runId])).toEqual([{ swept: true }]);
    expect(await bed.rows("SELECT type FROM run_events WHERE run_id = $1 AND type = 'run.rewoken'", [run.runId])).toHaveLength(1);

    await bed.sendOutbox();
    expect((await service.runOnce(bed.ctx)).rewoken).toBe(0); // swept within the interval
  });

  it("reads a run's progress from its steps: a run going for an hour whose step settled a moment ago is not stalled", async () => {
    // A settle and a walk bump only the run's seq (a HOT update), not its updated_at: that moves when the run's own
    // state does. The run below started an hour ago; its step settled just now and its walk's run.wake was lost.
    const run = await settled("done");
    await bed.rows("UPDATE runs SET updated_at = updated_at - interval '1 hour' WHERE id = $1", [run.runId]);
    const service = stalledRuns.make({ staleSeconds: 5, batch: 10 });
    expect((await service.runOnce(bed.ctx)).runs.map((r) => r.runId)).not.toContain(run.runId);
    // Once its step, too, has been quiet for the interval, it is.
    await bed.rows("UPDATE steps SET updated_at = updated_at - interval '10 seconds' WHERE run_id = $1", [run.runId]);
    expect((await service.runOnce(bed.ctx)).runs.map((r) => r.runId)).toContain(run.runId);
  });

  it("leaves a run parked for a person alone, however long it waits", async () => {
    const run = await settled("parked");
    const before = await bed.rows("SELECT (SELECT count(*)::int FROM run_events WHERE run_id = $1) AS events, (SELECT count(*)::int FROM outbox WHERE run_id = $1) AS outbox", [run.runId]);
    const service = stalledRuns.make({ staleSeconds: 5 });
    for (let i = 0; i < 3; i++) {
      await age(run.runId, 3600);
      expect((await service.runOnce(bed.ctx)).runs.map((r) => r.runId)).not.toContain(run.runId);
    }
    expect(await bed.rows("SELECT (SELECT count(*)::int FROM run_events WHERE run_id = $1) AS events, (SELECT count(*)::int FROM outbox WHERE run_id = $1) AS outbox", [run.runId])).toEqual(before);
  });
});
