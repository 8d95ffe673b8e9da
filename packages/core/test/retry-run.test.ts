import { createTestDatabase, type HttpTarget, httpChainGraph, publish, startHttpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeLifecycle } from "../src/run/automations/lifecycle";
import { lanes, type RunWake } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { decideRetry, rerunRun, retryFromFailedStep } from "../src/run/runs/retry-run";
import { outboxTakeDue } from "../src/store/sql/outbox";
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
  for (const slug of ["retry", "review", "archived", "rerun"]) {
    const a = await publish(t.db, httpChainGraph(target.url, 2, { maxAttempts: 1 }), { automation: slug });
    ids.set(slug, a.automationId);
    orgId = a.orgId;
  }
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

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

const runOf = async (runId: string) => (await rows("SELECT status, rerun_of, error FROM runs WHERE id = $1", [runId]))[0];
const eventsOf = async (runId: string) => (await rows("SELECT type, data FROM run_events WHERE run_id = $1 ORDER BY id", [runId])) as { type: string; data: Record<string, unknown> | null }[];

/** A run whose first call is refused once (500, one attempt): it fails at call_1. */
async function failedRun(slug: string, failStatus = 500): Promise<string> {
  target.behave({ failFirst: 1, failStatus });
  try {
    const runId = await startTestRun(t.db, slug, { id: `e${++n}` });
    await pump();
    expect((await runOf(runId)).status).toBe("failed");
    return runId;
  } finally {
    target.behave({ failFirst: 0 });
  }
}

describe("retry decisions (pure)", () => {
  const facts = {
    run: { status: "failed" as const, error: { reason: "step call_1 failed", nodeId: "call_1" } },
    automation: { status: "active" as const, pauseRuns: null },
    step: { nodeId: "call_1" },
    effect: { status: "settled" as const, failed: true },
  };
  it("retries a definite failure, forgetting the failed answer", () => {
    expect(decideRetry(facts)).toEqual({ kind: "retry", forgetEffect: true });
    expect(decideRetry({ ...facts, effect: null })).toEqual({ kind: "retry", forgetEffect: false });
  });
  it("refuses what is unsafe or impossible, each with a reason", () => {
    expect(decideRetry({ ...facts, effect: { status: "needs_review", failed: false } })).toMatchObject({ kind: "refuse", reason: expect.stringContaining("review it first") });
    expect(decideRetry({ ...facts, effect: { status: "in_flight", failed: false } })).toMatchObject({ kind: "refuse", reason: expect.stringContaining("in progress") });
    // The ledger re-sends an uncertain call with the same key only to a provider that deduplicates (else: review).
    expect(decideRetry({ ...facts, effect: { status: "outcome_unknown", failed: true } })).toEqual({ kind: "retry", forgetEffect: false });
    expect(decideRetry({ ...facts, automation: { status: "archived", pauseRuns: null } })).toMatchObject({ kind: "refuse", reason: expect.stringContaining("restore") });
    expect(decideRetry({ ...facts, automation: { status: "paused", pauseRuns: "hold" } })).toMatchObject({ kind: "refuse" });
    expect(decideRetry({ ...facts, automation: { status: "paused", pauseRuns: "continue" } }).kind).toBe("retry");
    expect(decideRetry({ ...facts, run: { status: "completed", error: null } })).toMatchObject({ kind: "refuse" });
    expect(decideRetry({ ...facts, run: { status: "failed", error: { reason: "step budget", budget: "steps" } } })).toMatchObject({ kind: "refuse" });
    expect(decideRetry({ ...facts, step: null })).toMatchObject({ kind: "refuse", reason: expect.stringContaining("Run again") });
    expect(decideRetry({ ...facts, run: { status: "running", error: null } })).toEqual({ kind: "unchanged" });
  });
});

describe("retry from the failed step", () => {
  it.each([
    [500, "an uncertain answer: the ledger re-sends it with the same key"],
    [422, "a definite refusal: the ledger forgets it so the call is made again"],
  ])("a failed http_request call (%i, %s) gets a new attempt with the same Idempotency-Key; the run completes", async (status) => {
    const runId = await failedRun("retry", status);
    const key = `${runId}/call_1/1`;
    expect(target.calls.get(key)).toBe(1);
    const outcome = await retryFromFailedStep(t.db, graphs, { orgId, runId, by: "sam@example.com" });
    expect(outcome).toMatchObject({ state: "retried", nodeId: "call_1" });
    // A second click reads back that it is running again, and changes nothing.
    expect(await retryFromFailedStep(t.db, graphs, { orgId, runId, by: "sam@example.com" })).toMatchObject({ state: "already_running" });
    await pump();
    expect(await runOf(runId)).toMatchObject({ status: "completed", error: null });
    expect(target.calls.get(key)).toBe(2); // the same key, sent again
    expect(target.calls.get(`${runId}/call_2/1`)).toBe(1);
    const events = await eventsOf(runId);
    const types = events.map((e) => e.type);
    expect(types.indexOf("run.failed")).toBeLessThan(types.indexOf("run.retried"));
    expect(types.indexOf("run.retried")).toBeLessThan(types.lastIndexOf("run.completed"));
    expect(events.find((e) => e.type === "run.retried")?.data).toMatchObject({ key, attempts: 1, forgotFailedAnswer: status === 422 });
    expect(await rows("SELECT status, attempt FROM steps WHERE run_id = $1 AND node_id = 'call_1'", [runId])).toEqual([{ status: "done", attempt: 2 }]);
  });

  it("is refused while the call's outcome is uncertain (needs review)", async () => {
    const runId = await failedRun("review");
    await t.sql.query("UPDATE effects SET status = 'needs_review' WHERE key = $1", [`${runId}/call_1/1`]);
    await expect(retryFromFailedStep(t.db, graphs, { orgId, runId, by: "sam" })).rejects.toMatchObject({
      code: "action_refused",
      message: expect.stringContaining("needs a review"),
    });
    expect((await runOf(runId)).status).toBe("failed");
  });

  it("is refused while the automation is archived", async () => {
    const runId = await failedRun("archived");
    await changeLifecycle(t.db, { orgId, automationId: ids.get("archived")!, change: { action: "archive" }, by: "sam" });
    await expect(retryFromFailedStep(t.db, graphs, { orgId, runId, by: "sam" })).rejects.toMatchObject({ message: expect.stringContaining("archived") });
    await expect(rerunRun(t.db, { orgId, runId, by: "sam" })).rejects.toMatchObject({ code: "automation_archived" });
  });
});

describe("run again with the same input", () => {
  it("starts a new run linked to the old one, on both timelines; a repeated request finds the same run", async () => {
    const oldRunId = await failedRun("rerun");
    const first = await rerunRun(t.db, { orgId, runId: oldRunId, by: "sam@example.com", requestKey: "click-1" });
    const again = await rerunRun(t.db, { orgId, runId: oldRunId, by: "sam@example.com", requestKey: "click-1" });
    expect(again).toEqual({ ...first, duplicate: true });
    expect(first.runId).not.toBe(oldRunId);
    const [oldInput, newInput] = await Promise.all([rows("SELECT input FROM runs WHERE id = $1", [oldRunId]), rows("SELECT input FROM runs WHERE id = $1", [first.runId])]);
    expect(newInput).toEqual(oldInput);
    expect((await runOf(first.runId)).rerun_of).toBe(oldRunId);
    expect((await eventsOf(oldRunId)).filter((e) => e.type === "run.rerun").map((e) => e.data)).toEqual([{ newRunId: first.runId, version: 1 }]);
    expect((await eventsOf(first.runId))[0]).toMatchObject({ type: "run.started", data: { rerunOf: oldRunId, by: "sam@example.com", via: "rerun" } });
    await pump();
    expect((await runOf(first.runId)).status).toBe("completed");
    // A different request is a new run.
    const other = await rerunRun(t.db, { orgId, runId: oldRunId, by: "sam@example.com" });
    expect(other.runId).not.toBe(first.runId);
  });
});
