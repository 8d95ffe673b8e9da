import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dueTimers } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

/** Runs waiting on their hour's timer, which the test makes due a minute ago (its fast-path wake-up lost). */
async function due(count: number) {
  const runs = [];
  for (let i = 0; i < count; i++) runs.push(await bed.start("wait"));
  await bed.rows("UPDATE timers SET due_at = now() - interval '1 minute' WHERE run_id = ANY($1)", [runs.map((r) => r.runId)]);
  await bed.sendOutbox();
  return runs;
}

describe("due-timers", () => {
  it("fires every due timer and walks its run on in the same commit: no run.wake, the timeline says by whom; a future timer waits", async () => {
    const [a, b] = await due(2);
    const later = await bed.start("wait");
    await bed.sendOutbox();

    expect(await dueTimers.make().runOnce(bed.ctx)).toEqual({ fired: 2, batches: 2 }); // the second batch found nothing
    expect(await bed.rows("SELECT fired_by, lateness_ms >= 60000 AS late FROM timers WHERE run_id = ANY($1)", [[a?.runId, b?.runId]])).toEqual([
      { fired_by: "sweeper", late: true },
      { fired_by: "sweeper", late: true },
    ]);
    expect(await bed.rows("SELECT status, advanced_at IS NOT NULL AS advanced FROM steps WHERE run_id = ANY($1)", [[a?.runId, b?.runId]])).toEqual([
      { status: "done", advanced: true },
      { status: "done", advanced: true },
    ]);
    // trigger -> wait -> end: the walk that followed the firing ended both runs, with nothing left for the engine.
    expect(await bed.rows("SELECT status FROM runs WHERE id = ANY($1)", [[a?.runId, b?.runId]])).toEqual([{ status: "completed" }, { status: "completed" }]);
    expect(await bed.rows("SELECT run_id FROM outbox WHERE topic = 'run.wake' AND sent_at IS NULL")).toEqual([]);
    expect(await bed.rows("SELECT type, worker FROM run_events WHERE run_id = $1 AND type IN ('timer.fired', 'run.completed') ORDER BY id", [a?.runId])).toEqual([
      { type: "timer.fired", worker: "sweeper" },
      { type: "run.completed", worker: "sweeper" },
    ]);
    expect(await bed.rows("SELECT fired_at FROM timers WHERE run_id = $1", [later.runId])).toEqual([{ fired_at: null }]);
    expect(await bed.rows("SELECT status FROM runs WHERE id = $1", [later.runId])).toEqual([{ status: "running" }]);
    expect(await dueTimers.make().runOnce(bed.ctx)).toEqual({ fired: 0, batches: 1 });
  });

  it("fires the timers with run.wake rows for the engine when walking their runs fails, and says why", async () => {
    const [a, b] = await due(2);
    const broken = { ...bed.ctx, graphs: { get: async () => Promise.reject(new Error("no graph here")) } as unknown as typeof bed.ctx.graphs };
    const result = await dueTimers.make().runOnce(broken);
    expect(result).toMatchObject({ fired: 2, batches: 2 });
    expect(String(result.walkFailed)).toContain("no graph here");
    expect(await bed.rows("SELECT status FROM steps WHERE run_id = ANY($1)", [[a?.runId, b?.runId]])).toEqual([{ status: "done" }, { status: "done" }]);
    expect((await bed.rows("SELECT run_id FROM outbox WHERE topic = 'run.wake' AND sent_at IS NULL AND payload->>'reason' = 'timer_fired'")).map((r) => r.run_id).sort()).toEqual(
      [a?.runId, b?.runId].sort(),
    );
    expect(await bed.rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'timer.fired'", [[a?.runId, b?.runId]])).toEqual([{ n: 2 }]);
    await bed.sendOutbox();
  });

  it("stops at maxBatches per run and says it is full, so the loop runs it again at once; the rest is fired by the next run", async () => {
    await due(3);
    const service = dueTimers.make({ orgs: 1, perOrg: 1, batch: 1, maxBatches: 2 });
    const first = await service.runOnce(bed.ctx);
    expect(first).toEqual({ fired: 2, batches: 2 });
    expect(service.full(first)).toBe(true);
    expect(await bed.rows("SELECT count(*)::int AS n FROM timers WHERE fired_at IS NULL AND due_at <= now()")).toEqual([{ n: 1 }]);
    const second = await service.runOnce(bed.ctx);
    expect(second).toEqual({ fired: 1, batches: 2 });
    expect(service.full(second)).toBe(true); // it cannot know the second batch was the last without a third look
    const third = await service.runOnce(bed.ctx);
    expect(third).toEqual({ fired: 0, batches: 1 });
    expect(service.full(third)).toBe(false);
    // A run that fired anything looks again after the busy interval (250 ms by default); an empty one waits the
    // interval.
    expect(service.nextInMs?.(second)).toBe(250);
    expect(service.nextInMs?.(third)).toBeUndefined();
    expect(dueTimers.make({ busyIntervalMs: 600 }).nextInMs?.(second)).toBe(600);
    // With one batch a run, an empty run is not full either: the loop waits its interval, it does not spin.
    const one = dueTimers.make({ maxBatches: 1 });
    const empty = await one.runOnce(bed.ctx);
    expect(empty).toEqual({ fired: 0, batches: 1 });
    expect(one.full(empty)).toBe(false);
  });

  it("drains a backlog with two batches at once, each timer fired and each run walked once", async () => {
    const runs = await due(12);
    // Batches of 2: the first is full, so two go at once from then on until both come back empty.
    const result = await dueTimers.make({ batch: 2, perOrg: 2, parallel: 2 }).runOnce(bed.ctx);
    expect(result.fired).toBe(12);
    expect(result.batches).toBeGreaterThanOrEqual(7);
    const ids = runs.map((r) => r.runId);
    expect(await bed.rows("SELECT count(*)::int AS n FROM timers WHERE run_id = ANY($1) AND fired_at IS NOT NULL", [ids])).toEqual([{ n: 12 }]);
    expect(await bed.rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'timer.fired'", [ids])).toEqual([{ n: 12 }]);
    expect(await bed.rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'run.completed'", [ids])).toEqual([{ n: 12 }]);
    expect(await bed.rows("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [ids])).toEqual([{ n: 12 }]);
  });

  it("gives one organisation left alone with due timers the whole batch, not its per-organisation share", async () => {
    await due(4);
    const service = dueTimers.make({ orgs: 20, perOrg: 1, batch: 3, maxBatches: 1 });
    expect(await service.runOnce(bed.ctx)).toEqual({ fired: 3, batches: 1 });
    expect(await service.runOnce(bed.ctx)).toEqual({ fired: 1, batches: 1 });
  });
});
