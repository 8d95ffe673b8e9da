import { createTestDatabase, type HttpTarget, httpChainGraph, publish, startHttpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { repairAll, runChecks } from "../src/run/ops/doctor";
import { StepRunner } from "../src/run/steps/runner";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Two of the doctor's checks, each seeded on its own and found (the others have e2e/doctor.test.ts):
 * - no_way_forward: a running run with no open step, nothing left to walk and no wake-up: the doctor names it, and
 *   --repair's wake-up lets the engine fail it with the reason where a person sees it;
 * - effects_past_lease: an effect claimed `in_flight` whose lease lapsed (the worker died mid-call): the doctor names
 *   the run and the key; the step's next attempt settles it with the same key (the provider acts once).
 */
let t: TestDatabase;
let target: HttpTarget;
let orgId = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  orgId = (await publish(t.db, httpChainGraph(target.url, 1), { automation: "call" })).orgId;
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

const finding = async (check: string) => (await runChecks(t.db)).find((f) => f.check === check);

describe("the doctor's checks", () => {
  it("no_way_forward: a running run with every step settled and walked, quiet and without a wake-up, is found and failed with the reason", async () => {
    expect(await finding("no_way_forward")).toMatchObject({ count: 0 });
    const runId = await startTestRun(t.db, "call", { id: "nowhere" });
    // Its only step settled and was walked, but the run never finished (and nothing will wake it).
    await q("UPDATE steps SET status = 'done', output = '{}', settled_at = now(), advanced_at = now(), updated_at = now() - interval '1 minute' WHERE run_id = $1", [runId]);
    await q("UPDATE runs SET updated_at = now() - interval '1 minute' WHERE id = $1", [runId]);
    await q("DELETE FROM outbox WHERE run_id = $1", [runId]);
    // Not yet quiet for the grace period: not reported.
    const fresh = await startTestRun(t.db, "call", { id: "fresh" });
    await q("UPDATE steps SET status = 'done', output = '{}', settled_at = now(), advanced_at = now() WHERE run_id = $1", [fresh]);
    await q("DELETE FROM outbox WHERE run_id = $1", [fresh]);

    expect(await finding("no_way_forward")).toMatchObject({ count: 1, examples: [{ runId, detail: expect.stringMatching(/^quiet for \d+ s$/) }] });
    expect((await repairAll(t.db, graphs, "doctor")).no_way_forward).toBe(1);
    expect(await q("SELECT payload->>'reason' AS reason FROM outbox WHERE run_id = $1 AND topic = 'run.wake' AND sent_at IS NULL", [runId])).toEqual([{ reason: "sweep" }]);
    expect(await advanceRun(t.db, graphs, { orgId, runId, reason: "sweep" })).toMatchObject({ status: "failed" });
    expect(await q("SELECT status, error->>'reason' AS reason FROM runs WHERE id = $1", [runId])).toEqual([
      { status: "failed", reason: "no way forward: no open step and nothing left to walk" },
    ]);
    expect(await finding("no_way_forward")).toMatchObject({ count: 0 });
  });

  it("no_way_forward: a settled step whose run.wake was lost (never walked, quiet, no wake-up) is found, and the repair's wake-up walks it on", async () => {
    const runId = await startTestRun(t.db, "call", { id: "lost-wake" });
    await q("UPDATE steps SET status = 'done', output = '{}', settled_at = now() - interval '1 minute', advanced_at = NULL, updated_at = now() - interval '1 minute' WHERE run_id = $1", [runId]);
    await q("UPDATE runs SET updated_at = now() - interval '1 minute' WHERE id = $1", [runId]);
    await q("DELETE FROM outbox WHERE run_id = $1", [runId]);
    // A held run (its automation paused with runs held) is quiet on purpose: its resume wakes it.
    const held = await startTestRun(t.db, "call", { id: "held" });
    await q("UPDATE steps SET status = 'done', output = '{}', settled_at = now(), advanced_at = NULL, updated_at = now() - interval '1 minute' WHERE run_id = $1", [held]);
    await q("UPDATE runs SET held_at = now(), updated_at = now() - interval '1 minute' WHERE id = $1", [held]);
    await q("DELETE FROM outbox WHERE run_id = $1", [held]);

    expect(await finding("no_way_forward")).toMatchObject({ count: 1, examples: [{ runId, detail: expect.stringMatching(/^a settled step was never walked \(its wake-up was lost\); quiet for \d+ s$/) }] });
    expect((await repairAll(t.db, graphs, "doctor")).no_way_forward).toBe(1);
    expect(await advanceRun(t.db, graphs, { orgId, runId, reason: "sweep" })).toMatchObject({ status: "completed" });
    expect(await finding("no_way_forward")).toMatchObject({ count: 0 });
  });

  it("effects_past_lease: an effect in flight whose lease lapsed is found by run and key; the next attempt settles it once", async () => {
    expect(await finding("effects_past_lease")).toMatchObject({ count: 0 });
    const runId = await startTestRun(t.db, "call", { id: "mid-call" });
    const [step] = await q("SELECT id FROM steps WHERE run_id = $1", [runId]);
    const key = `${runId}/call_1/1`;
    // Attempt 1 claimed the effect, began the call and its worker died: the step was reclaimed (ready again), the
    // effect's claim lapsed a minute ago and stays in flight until the next attempt reads it.
    await q("UPDATE steps SET attempt = 1 WHERE id = $1", [step.id]);
    await q(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent, started_at)
       VALUES ($1, $2, $3, $4, 'http_request', 'in_flight', $3 || ':1', now() - interval '1 minute', true, now() - interval '2 minutes')`,
      [orgId, runId, step.id, key],
    );
    // Another run's effect whose lease is still live is in flight, not past its lease.
    const live = await startTestRun(t.db, "call", { id: "live-call" });
    const [liveStep] = await q("SELECT id FROM steps WHERE run_id = $1", [live]);
    await q(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent)
       VALUES ($1, $2, $3, $2 || '/call_1/1', 'http_request', 'in_flight', $3 || ':1', now() + interval '1 minute', true)`,
      [orgId, live, liveStep.id],
    );

    expect(await finding("effects_past_lease")).toMatchObject({ count: 1, examples: [{ runId, detail: `${key} (http_request)` }] });
    // What the doctor's repair line says: the step's next attempt decides (here: re-sent with the same key).
    expect((await new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log }).run(step.id)).kind).toBe("settled");
    expect(await q("SELECT status, attempts FROM effects WHERE key = $1", [key])).toEqual([{ status: "settled", attempts: 2 }]);
    expect(target.calls.get(key)).toBe(1);
    expect(await finding("effects_past_lease")).toMatchObject({ count: 0 });
  });
});
