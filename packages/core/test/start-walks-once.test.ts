import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { changeLifecycle } from "../src/run/automations/lifecycle";
import { type StartRequest, startRun } from "../src/run/start/start-run";
import { parseGraph } from "../src/versions/graph";
import * as walk from "../src/decide/walk/walk";

// Every call of the walk's `decide` is counted: a start makes one walk, whichever way it is written.
vi.mock("../src/decide/walk/walk", async (original) => {
  const real = await original<typeof import("../src/decide/walk/walk")>();
  return { ...real, decide: vi.fn(real.decide) };
});
const decide = vi.mocked(walk.decide);

let t: TestDatabase;
let held: { orgId: string; automationId: string };

beforeAll(async () => {
  t = await createTestDatabase();
  // One statement (holdfast_run_start): the first walk needs nothing from the engine.
  await publish(t.db, httpChainGraph("https://example.com/hook", 1), { automation: "inline" });
  // The engine's transaction: a first walk that plans a timer from the database clock.
  const timer = parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 } } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "pause" },
      { from: "pause", to: "e" },
    ],
  });
  await publish(t.db, timer, { automation: "timer" });
  // A start to an automation paused with "hold": accepted, held, walked in the transaction.
  held = await publish(t.db, httpChainGraph("https://example.com/hook", 1), { automation: "held" });
  await changeLifecycle(t.db, { orgId: held.orgId, automationId: held.automationId, change: { action: "pause", mode: "hold", runs: "continue" }, by: "test" });
});
afterAll(async () => {
  await t?.drop();
});
beforeEach(() => {
  decide.mockClear();
});

function deliver(automation: string, id: string, extra: Partial<StartRequest> = {}) {
  return startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: "{}",
    body: { id },
    headers: { "webhook-id": id, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
    ...extra,
  });
}

const stepsOf = async (runId: string) =>
  (await t.sql.query("SELECT node_id || ':' || status AS s FROM steps WHERE run_id = $1 ORDER BY id", [runId])).rows.map((r) => r.s as string);

describe("a start walks once", () => {
  it("on the one-statement path", async () => {
    const started = await deliver("inline", "evt_inline");
    expect(decide).toHaveBeenCalledTimes(1);
    expect(await stepsOf(started.runId)).toEqual(["call_1:ready"]);
  });

  it("on the engine's transactional path (a first wait), the walk made before the transaction applied in it", async () => {
    const started = await deliver("timer", "evt_timer");
    expect(decide).toHaveBeenCalledTimes(1);
    expect(await stepsOf(started.runId)).toEqual(["pause:waiting"]);
  });

  it("for a held start: the walk is made, and the hold applies none of it", async () => {
    const started = await deliver("held", "evt_held");
    expect(decide).toHaveBeenCalledTimes(1);
    expect(await stepsOf(started.runId)).toEqual([]);
    const [run] = (await t.sql.query("SELECT status, held_at IS NOT NULL AS held FROM runs WHERE id = $1", [started.runId])).rows;
    expect(run).toEqual({ status: "running", held: true });
  });

  it("for a test run and a rerun", async () => {
    const test = await deliver("inline", "evt_test", { test: { by: "sam@example.com" } });
    expect(decide).toHaveBeenCalledTimes(1);
    expect(await stepsOf(test.runId)).toEqual(["call_1:ready"]);
    decide.mockClear();
    const rerun = await deliver("inline", "evt_inline", { rerun: { of: test.runId, by: "sam@example.com", requestKey: "r1" } });
    expect(decide).toHaveBeenCalledTimes(1);
    expect(rerun.duplicate).toBe(false);
  });

  it("a repeated delivery walks once more at most and writes no step", async () => {
    const first = await deliver("timer", "evt_again");
    decide.mockClear();
    const again = await deliver("timer", "evt_again");
    expect(again).toMatchObject({ runId: first.runId, duplicate: true });
    expect(decide.mock.calls.length).toBeLessThanOrEqual(1);
    expect(await stepsOf(first.runId)).toEqual(["pause:waiting"]);
  });
});
