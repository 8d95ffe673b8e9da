import { createLogger, lanes } from "@holdfast/core/base";
import { GraphCache, parseGraph } from "@holdfast/core/versions";
import { requestCancel, reviewStoppedRunEffect, StepRunner } from "@holdfast/core/run";
import { buildStory } from "@holdfast/core/story";
import { createTestDatabase, type HttpTarget, publish, startHttpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listRuns, runDetail } from "../src/server/runs";

/**
 * The needs-review list (the runs list filtered to "needs review") holds every run a person must look at, a
 * cancelled one too: a run cancelled while its call's outcome was unknown (the provider answered 502, or the step
 * was parked for a review) still owes someone a check at the provider.
 */
let t: TestDatabase;
let target: HttpTarget;
let orgId = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
let n = 0;

const callGraph = (url: string, idempotent: boolean) =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "call", kind: "http_request", config: { url, idempotent, maxAttempts: 5 } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "call" },
      { from: "call", to: "e" },
    ],
  });

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  orgId = (await publish(t.db, callGraph(target.url, true), { automation: "resend" })).orgId;
  await publish(t.db, callGraph(target.url, false), { automation: "once" });
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });

/** A run of `automation` whose call got a 502 (no definite answer) on each of `calls` attempts, then cancelled. */
async function cancelledWhileUncertain(automation: string, calls: number): Promise<string> {
  const runId = await startTestRun(t.db, automation, { id: `c${++n}` });
  const [step] = await q("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'call'", [runId]);
  target.behave({ failFirst: 100, failStatus: 502 });
  for (let i = 0; i < calls; i++) {
    await q("UPDATE steps SET available_at = now() WHERE id = $1 AND status = 'ready'", [step.id]);
    await runner().run(step.id);
  }
  expect(await requestCancel(t.db, graphs, orgId, runId, "changed my mind", "test")).toMatchObject({ state: "cancelled" });
  return runId;
}

const reviewList = async () => (await listRuns(t.db, [orgId], { status: "needs_review" })).map((r) => r.id);

describe("the needs-review list", () => {
  it("holds a run cancelled while its call's outcome was unknown or parked for a review, not a plainly cancelled one", async () => {
    const unknown = await cancelledWhileUncertain("resend", 1);
    expect(await q("SELECT status FROM effects WHERE run_id = $1", [unknown])).toEqual([{ status: "outcome_unknown" }]);
    const parked = await cancelledWhileUncertain("once", 2);
    expect(await q("SELECT status FROM effects WHERE run_id = $1", [parked])).toEqual([{ status: "needs_review" }]);
    const plain = await startTestRun(t.db, "resend", { id: `c${++n}` });
    await requestCancel(t.db, graphs, orgId, plain, "not needed", "test");

    const list = await reviewList();
    expect(list).toContain(unknown);
    expect(list).toContain(parked);
    expect(list).not.toContain(plain);
    expect((await runDetail(t.db, [orgId], unknown))?.run).toMatchObject({ status: "cancelled", displayStatus: "needs_review" });
    expect((await listRuns(t.db, [orgId], { status: "cancelled" })).map((r) => r.id)).toEqual([plain]);
  });

  it("the run page says so, and a person's answer (with a note) takes the run off the list, on its timeline", async () => {
    const unknown = await cancelledWhileUncertain("resend", 1);
    const parked = await cancelledWhileUncertain("once", 2);
    const story = async (runId: string) => {
      const d = await runDetail(t.db, [orgId], runId);
      if (!d) throw new Error("no detail");
      return buildStory({ ...d, run: d.run, contact: null, viewerZone: "UTC", uncertain: d.uncertain });
    };
    const before = (await story(unknown)).status;
    expect(before).toMatchObject({ state: "needs_review", actions: ["resolve"] });
    expect(before.text).toMatch(/^Cancelled by test.*: the call at HTTP request "call" may or may not have happened/);
    const [effect] = await q("SELECT key FROM effects WHERE run_id = $1", [unknown]);

    // A note is required; a running or finished-otherwise run is refused; a wrong key is refused.
    await expect(reviewStoppedRunEffect(t.db, { orgId, runId: unknown, key: effect.key, happened: true, note: " ", by: "user:olivia" })).rejects.toThrow(/note is required/);
    await expect(reviewStoppedRunEffect(t.db, { orgId, runId: parked, key: effect.key, happened: true, note: "x", by: "user:olivia" })).rejects.toThrow(/not waiting for a review/);

    await reviewStoppedRunEffect(t.db, { orgId, runId: unknown, key: effect.key, happened: true, note: "the CRM shows the record", by: "user:olivia" });
    expect(await q("SELECT status, result FROM effects WHERE run_id = $1", [unknown])).toEqual([
      { status: "settled", result: { resolved: "done", note: "the CRM shows the record", by: "user:olivia" } },
    ]);
    const [parkedEffect] = await q("SELECT key FROM effects WHERE run_id = $1", [parked]);
    await reviewStoppedRunEffect(t.db, { orgId, runId: parked, key: parkedEffect.key, happened: false, note: "nothing arrived", by: "user:olivia" });
    expect(await q("SELECT status, error->>'code' AS code FROM effects WHERE run_id = $1", [parked])).toEqual([{ status: "settled", code: "not_performed" }]);
    // A second answer to the same call is refused: the first one stands.
    await expect(reviewStoppedRunEffect(t.db, { orgId, runId: parked, key: parkedEffect.key, happened: true, note: "again", by: "user:olivia" })).rejects.toThrow(/not waiting for a review/);

    const list = await reviewList();
    expect(list).not.toContain(unknown);
    expect(list).not.toContain(parked);
    const after = await story(unknown);
    expect(after.status.state).toBe("cancelled");
    expect(after.sentences.map((s) => s.text)).toContainEqual(expect.stringMatching(/^Marked as done by .*: "the CRM shows the record"/));
    expect((await story(parked)).sentences.map((s) => s.text)).toContainEqual(expect.stringMatching(/^Checked: it did not happen, by .*: "nothing arrived"/));
    expect(await q("SELECT type, data->>'note' AS note FROM run_events WHERE run_id = $1 AND type LIKE 'review.%'", [parked])).toEqual([
      { type: "review.not_performed", note: "nothing arrived" },
    ]);
  });
});
