import { inTx } from "@holdfast/db";
import { describe, expect, it } from "vitest";
import type { TimerDue } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { type FireResult, fireTimer } from "../src/run/timers/fire";
import { fireAndWalkSet } from "../src/run/engine/fire-set";
import { TimerFirer } from "../src/run/engine/fire-timers";
import { GraphCache } from "../src/versions/graph-cache";
import { countedTransactions, pauseBed } from "./timer-waits";

const bed = pauseBed();
const rows = bed.rows;
const waiting = bed.waiting;
const counted = countedTransactions;

describe("the fast path's batched firing (TimerFirer)", () => {
  it("fires the timers whose jobs arrive together and walks their runs to the end in one transaction, with no run.wake rows", async () => {
    const dues = await Promise.all(Array.from({ length: 20 }, () => waiting(-1)));
    await rows("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    const { db, count } = counted(bed.t.db);
    const alone: TimerDue[] = [];
    const walked: [string, string][] = [];
    const firer = new TimerFirer({
      db,
      graphs: new GraphCache(),
      actor: "engine-test",
      alone: async (d) => (alone.push(d), { kind: "stale" }),
      walked: (d, walk) => walked.push([d.runId, walk.status]),
    });
    const results = await Promise.all(dues.map((d) => firer.fire(d)));
    // Each fired run's walk is told (its trace span), with what the walk left it at.
    expect(walked.sort()).toEqual(dues.map((d): [string, string] => [d.runId, "completed"]).sort());

    expect(results).toEqual(dues.map((d) => ({ kind: "fired", runId: d.runId })));
    // The first went at once, alone in its batch; the 19 that arrived meanwhile went together after it.
    expect(count.transactions).toBe(2);
    expect(alone).toEqual([]);
    const runIds = dues.map((d) => d.runId);
    expect(await rows("SELECT DISTINCT status FROM runs WHERE id = ANY($1)", [runIds])).toEqual([{ status: "completed" }]);
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE run_id = ANY($1) AND fired_by = 'engine-test'", [runIds])).toEqual([{ n: 20 }]);
    expect(await rows("SELECT topic FROM outbox WHERE run_id = ANY($1) AND sent_at IS NULL", [runIds])).toEqual([]);
    // One timer.fired and one run.completed on each run's timeline.
    expect(await rows("SELECT type, count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type IN ('timer.fired', 'run.completed') GROUP BY type ORDER BY type", [runIds])).toEqual([
      { type: "run.completed", n: 20 },
      { type: "timer.fired", n: 20 },
    ]);
  });

  it("answers each job for itself in a batch: fired, not yet due and in how long, an old wake number, a job that came twice", async () => {
    const [lead, due, early, old, twice] = await Promise.all([waiting(-1), waiting(-1), waiting(30), waiting(-1), waiting(-1)]);
    if (!lead || !due || !early || !old || !twice) throw new Error("setup");
    const firer = new TimerFirer({ db: bed.t.db, graphs: new GraphCache(), actor: "engine-test", alone: fireAloneNever });
    const [, ...results] = await Promise.all([lead, due, early, { ...old, wake: old.wake + 1 }, twice, twice].map((d) => firer.fire(d)));

    expect(results[0]).toEqual({ kind: "fired", runId: due.runId });
    expect(results[1]).toMatchObject({ kind: "not_due" });
    const inMs = (results[1] as Extract<FireResult, { kind: "not_due" }>).inMs;
    expect(inMs).toBeGreaterThan(25_000);
    expect(inMs).toBeLessThanOrEqual(30_000);
    expect(results[2]).toEqual({ kind: "stale" }); // a wake number the timer does not have: never fired
    expect(results.slice(3)).toEqual([{ kind: "fired", runId: twice.runId }, { kind: "stale" }]);
    expect(await rows("SELECT run_id, fired_at IS NOT NULL AS fired FROM timers WHERE run_id = ANY($1) ORDER BY run_id", [[early.runId, old.runId]])).toEqual(
      [early, old].map((d) => ({ run_id: d.runId, fired: false })).sort((a, b) => (a.run_id < b.run_id ? -1 : 1)),
    );
    expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'timer.fired'", [twice.runId])).toEqual([{ n: 1 }]);
  });

  it("answers a batch of jobs whose timers the due sweep fired first with one read: stale, and no firing transaction", async () => {
    const [lead, ...swept] = await Promise.all(Array.from({ length: 6 }, () => waiting(-1)));
    if (!lead) throw new Error("setup");
    // The spike at one instant: the due sweep fired these before their delayed jobs came.
    await inTx(bed.t.db, (tx) => fireAndWalkSet(tx, new GraphCache(), swept.map((d) => d.timerId), null, "sweeper-test"));
    const { db, count } = counted(bed.t.db);
    const firer = new TimerFirer({ db, graphs: new GraphCache(), actor: "engine-test", alone: fireAloneNever });
    const results = await Promise.all([lead, ...swept].map((d) => firer.fire(d)));

    expect(results).toEqual([{ kind: "fired", runId: lead.runId }, ...swept.map(() => ({ kind: "stale" }))]);
    // The lead's own transaction; the five that came meanwhile were read, found fired, and answered without one.
    expect(count.transactions).toBe(1);
    const runIds = swept.map((d) => d.runId);
    expect(await rows("SELECT DISTINCT fired_by FROM timers WHERE run_id = ANY($1)", [runIds])).toEqual([{ fired_by: "sweeper-test" }]);
    expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'timer.fired'", [runIds])).toEqual([{ n: 5 }]);
  });

  it("a batch whose transaction throws keeps nothing, and each of its timers goes through the path alone", async () => {
    const dues = await Promise.all(Array.from({ length: 4 }, () => waiting(-1)));
    // The walk of a batch reads each run's graph through the cache: broken here, as a run the walk cannot handle.
    const broken = new GraphCache();
    broken.get = async () => Promise.reject(new Error("this run's graph cannot be walked"));
    const seen: { due: TimerDue; firedBefore: boolean }[] = [];
    const firer = new TimerFirer({
      db: bed.t.db,
      graphs: broken,
      actor: "engine-test",
      alone: async (d) => {
        const [timer] = await rows("SELECT fired_at FROM timers WHERE id = $1", [d.timerId]);
        seen.push({ due: d, firedBefore: timer.fired_at !== null });
        const result = await fireTimer(bed.t.db, d, "alone");
        if (result.kind === "fired") await advanceRun(bed.t.db, new GraphCache(), { orgId: d.orgId, runId: d.runId, reason: "timer_fired" });
        return result;
      },
    });
    const results = await Promise.all(dues.map((d) => firer.fire(d)));

    expect(results).toEqual(dues.map((d) => ({ kind: "fired", runId: d.runId })));
    expect(seen.map((s) => s.due.timerId).sort()).toEqual(dues.map((d) => d.timerId).sort());
    expect(seen.every((s) => !s.firedBefore)).toBe(true); // the batch's firing rolled back with its walk
    expect(await rows("SELECT DISTINCT fired_by FROM timers WHERE run_id = ANY($1)", [dues.map((d) => d.runId)])).toEqual([{ fired_by: "alone" }]);
    expect(await rows("SELECT DISTINCT status FROM runs WHERE id = ANY($1)", [dues.map((d) => d.runId)])).toEqual([{ status: "completed" }]);
  });
});

async function fireAloneNever(): Promise<FireResult> {
  throw new Error("no batch here should fall back");
}
