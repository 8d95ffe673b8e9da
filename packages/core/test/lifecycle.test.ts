import { createTestDatabase, type HttpTarget, httpChainGraph, publish, startHttpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeLifecycle, decideLifecycle, deliveryGate, type LifecycleState } from "../src/run/automations/lifecycle";
import { holdsWalk } from "../src/decide/walk/plan";
import { countRunsToStop, stopAllRuns } from "../src/run/runs/stop-all";
import { lanes, type RunWake } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { recordRefusedDelivery } from "../src/run/start/deliveries";
import { outboxTakeDue } from "../src/store/sql/outbox";
import { runsRunningBatch } from "../src/store/sql/runs-of-automation";
import { StepRunner } from "../src/run/steps/runner";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let target: HttpTarget;
let orgId: string;
const ids = new Map<string, string>();
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  for (const slug of ["hold-runs", "hold-deliveries", "refuse", "stop", "archive"]) {
    const a = await publish(t.db, httpChainGraph(target.url, 2, { maxAttempts: 1, ...(slug === "stop" ? { pauseSeconds: 3600 } : {}) }), { automation: slug });
    ids.set(slug, a.automationId);
    orgId = a.orgId;
  }
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

const aut = (slug: string) => ids.get(slug)!;
const start = (slug: string) => startTestRun(t.db, slug, { id: `e${++n}` });

/** The engine and a lane worker, driven by hand: takes due wake-ups from the outbox until none is left. */
async function pump(): Promise<void> {
  const worker = new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });
  for (let i = 0; i < 50; i++) {
    const steps = await inTx(t.db, (tx) => outboxTakeDue(tx, "step.ready", null, 10));
    const wakes = await inTx(t.db, (tx) => outboxTakeDue(tx, "run.wake", null, 10));
    for (const s of steps) await worker.run((s.payload as { stepId: string }).stepId);
    for (const w of wakes) await advanceRun(t.db, graphs, w.payload as RunWake);
    if (steps.length === 0 && wakes.length === 0) return;
  }
  throw new Error("pump did not settle");
}

const stepsOf = async (runId: string) => (await rows("SELECT node_id, status FROM steps WHERE run_id = $1 ORDER BY created_at", [runId])).map((r) => `${r.node_id}:${r.status}`);
const runOf = async (runId: string) => (await rows("SELECT status, held_at IS NOT NULL AS held FROM runs WHERE id = $1", [runId]))[0];
const eventsOf = async (runId: string) => (await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((r) => r.type as string);

describe("lifecycle decisions (pure)", () => {
  const active: LifecycleState = { status: "active", pauseMode: null, pauseRuns: null };
  it("pause, repeat, resume, archive, restore", () => {
    const pause = decideLifecycle(active, { action: "pause", mode: "refuse", runs: "hold" });
    expect(pause).toEqual({ kind: "change", to: { status: "paused", pauseMode: "refuse", pauseRuns: "hold" }, holdRuns: true, releaseRuns: false });
    const paused: LifecycleState = { status: "paused", pauseMode: "refuse", pauseRuns: "hold" };
    expect(decideLifecycle(paused, { action: "pause", mode: "refuse", runs: "hold" })).toEqual({ kind: "unchanged" });
    expect(decideLifecycle(paused, { action: "resume" })).toEqual({ kind: "change", to: active, holdRuns: false, releaseRuns: true });
    expect(decideLifecycle(active, { action: "resume" })).toEqual({ kind: "unchanged" });
    const archived: LifecycleState = { status: "archived", pauseMode: null, pauseRuns: null };
    expect(decideLifecycle(paused, { action: "archive" })).toMatchObject({ kind: "change", to: archived, releaseRuns: false });
    expect(decideLifecycle(archived, { action: "pause", mode: "hold", runs: "continue" }).kind).toBe("refuse");
    expect(decideLifecycle(archived, { action: "resume" }).kind).toBe("refuse");
    expect(decideLifecycle(archived, { action: "restore" })).toEqual({ kind: "change", to: active, holdRuns: false, releaseRuns: true });
    expect(decideLifecycle(paused, { action: "restore" }).kind).toBe("refuse");
  });
  it("gates deliveries; a test run passes a pause but not an archive", () => {
    expect(deliveryGate("active", "a", false)).toEqual({ kind: "accept" });
    expect(deliveryGate("hold", "a", false)).toEqual({ kind: "hold" });
    expect(deliveryGate("refuse", "a", false)).toMatchObject({ kind: "refuse", error: { code: "automation_paused" } });
    expect(deliveryGate("refuse", "a", true)).toEqual({ kind: "accept" });
    expect(deliveryGate("archived", "a", true)).toMatchObject({ kind: "refuse", error: { code: "automation_archived" } });
  });
  it("a held walk schedules nothing but may cancel or end", () => {
    const schedule = { type: "schedule_step", nodeId: "x", kind: "http_request", lane: "io", iteration: 1, maxAttempts: 1 } as const;
    expect(holdsWalk(true, [{ type: "mark_advanced", stepId: "s" }, schedule])).toBe(true);
    expect(holdsWalk(false, [schedule])).toBe(false);
    expect(holdsWalk(true, [{ type: "cancel_run", stepIds: [] }])).toBe(false);
    expect(holdsWalk(true, [{ type: "complete_run", nodeId: "end" }])).toBe(false);
  });
});

describe("pause with running runs held", () => {
  it("a run gets no next step until resume, then completes; the history says who and when", async () => {
    const runId = await start("hold-runs");
    expect(await stepsOf(runId)).toEqual(["call_1:ready"]);
    const paused = await changeLifecycle(t.db, { orgId, automationId: aut("hold-runs"), change: { action: "pause", mode: "refuse", runs: "hold" }, by: "sam@example.com" });
    expect(paused).toMatchObject({ status: "paused", changed: true, heldRuns: 1 });
    // The step already handed out finishes; the worker's settle does not walk on (held), nor does the engine.
    await pump();
    expect(await stepsOf(runId)).toEqual(["call_1:done"]);
    expect(await runOf(runId)).toEqual({ status: "running", held: true });
    expect(target.calls.get(`${runId}/call_2/1`)).toBeUndefined();
    // A second wake-up (the sweeper, a duplicate) still schedules nothing.
    await advanceRun(t.db, graphs, { orgId, runId, reason: "sweep" });
    expect(await stepsOf(runId)).toEqual(["call_1:done"]);
    // Pausing again with the same choices changes nothing.
    expect((await changeLifecycle(t.db, { orgId, automationId: aut("hold-runs"), change: { action: "pause", mode: "refuse", runs: "hold" }, by: "sam@example.com" })).changed).toBe(false);

    expect(await changeLifecycle(t.db, { orgId, automationId: aut("hold-runs"), change: { action: "resume" }, by: "sam@example.com" })).toMatchObject({ status: "active", releasedRuns: 1 });
    await pump();
    expect(await stepsOf(runId)).toEqual(["call_1:done", "call_2:done"]);
    expect(await runOf(runId)).toEqual({ status: "completed", held: false });
    expect(await eventsOf(runId)).toEqual(expect.arrayContaining(["run.held", "run.released", "run.completed"]));
    const history = await rows("SELECT by, action, from_status, to_status, pause_mode, pause_runs, at IS NOT NULL AS at FROM automation_history WHERE automation_id = $1 ORDER BY seq", [aut("hold-runs")]);
    expect(history).toEqual([
      { by: "sam@example.com", action: "pause", from_status: "active", to_status: "paused", pause_mode: "refuse", pause_runs: "hold", at: true },
      { by: "sam@example.com", action: "resume", from_status: "paused", to_status: "active", pause_mode: null, pause_runs: null, at: true },
    ]);
  });
});

describe("pause with deliveries held", () => {
  it("a delivery is accepted and its run waits before its first step until resume", async () => {
    await changeLifecycle(t.db, { orgId, automationId: aut("hold-deliveries"), change: { action: "pause", mode: "hold", runs: "continue" }, by: "cli" });
    const runId = await start("hold-deliveries");
    expect(await stepsOf(runId)).toEqual([]);
    expect(await runOf(runId)).toEqual({ status: "running", held: true });
    await pump();
    expect(await stepsOf(runId)).toEqual([]);
    await changeLifecycle(t.db, { orgId, automationId: aut("hold-deliveries"), change: { action: "resume" }, by: "cli" });
    await pump();
    expect(await runOf(runId)).toEqual({ status: "completed", held: false });
    expect(await stepsOf(runId)).toEqual(["call_1:done", "call_2:done"]);
  });
});

describe("pause with deliveries refused", () => {
  it("refuses the start and writes nothing but the delivery log row", async () => {
    await changeLifecycle(t.db, { orgId, automationId: aut("refuse"), change: { action: "pause", mode: "refuse", runs: "continue" }, by: "cli" });
    const count = async () =>
      (await rows(`SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM run_events)::int AS events, (SELECT count(*) FROM steps)::int AS steps,
                          (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM contacts)::int AS contacts, (SELECT count(*) FROM trigger_deliveries)::int AS deliveries`))[0];
    const before = await count();
    await expect(startTestRun(t.db, "refuse", { id: "refused-1", email: "x@example.com" })).rejects.toMatchObject({ code: "automation_paused" });
    expect(await count()).toEqual(before);
    await recordRefusedDelivery(t.db, { orgId, automationSlug: "refuse", status: 503, code: "automation_paused", reason: "paused", webhookId: "w1", contentType: "application/json", bodyBytes: 2 });
    expect(await count()).toEqual({ ...before, deliveries: before.deliveries + 1 });
    await changeLifecycle(t.db, { orgId, automationId: aut("refuse"), change: { action: "resume" }, by: "cli" });
    const runId = await startTestRun(t.db, "refuse", { id: "refused-1" });
    expect((await runOf(runId)).status).toBe("running");
  });
});

describe("stop all runs", () => {
  it("counts, then cancels each through the single-run cancel, with a history row", async () => {
    const runIds = [await start("stop"), await start("stop"), await start("stop")];
    await pump(); // each waits on its timer after call_1
    expect(await countRunsToStop(t.db, orgId, aut("stop"))).toBe(3);
    expect(await countRunsToStop(t.db, orgId, aut("stop"), 2)).toBe(0); // no version 2
    await expect(stopAllRuns(t.db, graphs, { orgId, automationId: aut("stop"), reason: " ", by: "sam" })).rejects.toMatchObject({ code: "action_refused" });
    const outcome = await stopAllRuns(t.db, graphs, { orgId, automationId: aut("stop"), version: 1, reason: "wrong list imported", by: "sam" });
    expect(outcome).toEqual({ cancelled: 3, requested: 0, alreadyFinished: 0 });
    for (const id of runIds) {
      expect((await runOf(id)).status).toBe("cancelled");
      expect(await eventsOf(id)).toEqual(expect.arrayContaining(["run.cancel_requested", "run.cancelled"]));
    }
    expect(await rows("SELECT cancel_reason FROM runs WHERE id = ANY($1)", [runIds])).toEqual(runIds.map(() => ({ cancel_reason: "wrong list imported" })));
    expect(await countRunsToStop(t.db, orgId, aut("stop"))).toBe(0);
    const [h] = await rows("SELECT action, reason, detail FROM automation_history WHERE automation_id = $1", [aut("stop")]);
    expect(h).toEqual({ action: "stop_runs", reason: "wrong list imported", detail: { cancelled: 3, requested: 0, alreadyFinished: 0, version: 1 } });
  });
});

describe("stop all runs takes the runs started by the moment it began", () => {
  it("a run started after that moment is not in its batches, though its time-ordered id sorts after the cursor", async () => {
    const before = await start("stop");
    const now = (await rows("SELECT now() AS now"))[0]?.now as Date;
    await new Promise((r) => setTimeout(r, 5));
    const after = await start("stop");
    expect(after > before).toBe(true);
    const batch = await runsRunningBatch(t.db, orgId, aut("stop"), null, "", 100, now);
    expect(batch.map((b) => b.id)).toEqual([before]);
    expect((await runsRunningBatch(t.db, orgId, aut("stop"), null, "", 100, new Date(Date.now() + 60_000))).map((b) => b.id)).toEqual([before, after]);
    await stopAllRuns(t.db, graphs, { orgId, automationId: aut("stop"), reason: "clean up the test", by: "sam" });
  });
});

describe("stop all runs of a held automation", () => {
  it("cancels held runs too (a cancel goes through a hold), and the run is no longer held", async () => {
    const automationId = aut("hold-deliveries");
    await changeLifecycle(t.db, { orgId, automationId, change: { action: "pause", mode: "hold", runs: "hold" }, by: "cli" });
    const runId = await start("hold-deliveries");
    expect(await runOf(runId)).toEqual({ status: "running", held: true });
    expect(await stopAllRuns(t.db, graphs, { orgId, automationId, reason: "not needed", by: "cli" })).toEqual({ cancelled: 1, requested: 0, alreadyFinished: 0 });
    expect(await runOf(runId)).toEqual({ status: "cancelled", held: false });
    await changeLifecycle(t.db, { orgId, automationId, change: { action: "resume" }, by: "cli" });
  });
});

describe("archive", () => {
  it("refuses starts (test runs too) until restored", async () => {
    await changeLifecycle(t.db, { orgId, automationId: aut("archive"), change: { action: "archive" }, by: "cli" });
    await expect(start("archive")).rejects.toMatchObject({ code: "automation_archived" });
    await expect(changeLifecycle(t.db, { orgId, automationId: aut("archive"), change: { action: "resume" }, by: "cli" })).rejects.toMatchObject({ code: "lifecycle_refused" });
    await changeLifecycle(t.db, { orgId, automationId: aut("archive"), change: { action: "restore" }, by: "cli" });
    expect((await runOf(await start("archive"))).status).toBe("running");
  });
});
