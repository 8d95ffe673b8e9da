import { describe, expect, it } from "vitest";
import { prepare, scheduleStep, statementRows, stepReady } from "../src/run/apply/rows";
import { topics } from "../src/base/catalog";
import { effectKinds } from "../src/versions/kinds/registry";
import type { Command } from "../src/decide/walk/walk";

// The applier's pure half: a plan (the walk's commands) as the rows every path writes. No database.

const at = { orgId: "org_1", runId: "run_1", actor: "w1" };
const stepId = expect.stringMatching(/^stp_[0-9a-f]{32}$/);
const call: Extract<Command, { type: "schedule_step" }> = { type: "schedule_step", nodeId: "call", kind: "http_request", lane: "io", iteration: 2, maxAttempts: 8 };
const wait: Extract<Command, { type: "schedule_step" }> = { type: "schedule_step", nodeId: "pause", kind: "wait", lane: "human", iteration: 1, maxAttempts: 1 };

describe("what happens when a step is scheduled", () => {
  it("a step on a lane: its row (ready, id in the database's format), step.scheduled, and one step.ready naming it", () => {
    const s = scheduleStep(call, at);
    expect(s.step).toEqual({ id: stepId, orgId: "org_1", runId: "run_1", nodeId: "call", iteration: 2, kind: "http_request", lane: "io", maxAttempts: 8, status: "ready" });
    expect(s.events).toEqual([{ orgId: "org_1", runId: "run_1", worker: "w1", type: "step.scheduled", stepId: s.step.id, nodeId: "call", lane: "io", data: { iteration: 2 } }]);
    expect(s.outbox).toEqual([stepReady(s.step)]);
    expect(s.waitsFor).toBeNull();
    // The one step.ready payload is what the lane workers' edge accepts.
    expect(topics["step.ready"].payload.parse(s.outbox[0]?.payload)).toEqual({ orgId: "org_1", runId: "run_1", stepId: s.step.id, lane: "io" });
  });

  it("a wait: inserted waiting, no wake-up of its own (its timer follows in the transaction)", () => {
    const s = scheduleStep(wait, at);
    expect(s).toMatchObject({ step: { status: "waiting" }, events: [], outbox: [], waitsFor: { kind: "timer" } });
    expect(scheduleStep({ ...call, nodeId: "ok", kind: "approval", lane: "human", stage: 2 }, at).waitsFor).toEqual({ kind: "approval", stage: 2 });
  });

  it("a step claimed by the settling worker (local dispatch): running under its lease, no timeline row of its own (the settle's row says it), no wake-up", () => {
    const s = scheduleStep(call, { ...at, claim: { lane: "io", leaseMs: 30_000 } }, true);
    expect(s.step).toMatchObject({ status: "running", owner: "w1", attempt: 1, leaseMs: 30_000 });
    expect(s.events).toEqual([]);
    expect(s.outbox).toEqual([]);
  });

  it("a retry's wake-up is the same payload, due later", () => {
    expect(stepReady({ orgId: "o", runId: "r", id: "s", lane: "slow" }, 1500)).toEqual({
      orgId: "o",
      runId: "r",
      topic: "step.ready",
      payload: { orgId: "o", runId: "r", stepId: "s", lane: "slow" },
      delayMs: 1500,
    });
  });
});

describe("a plan as one statement's rows", () => {
  const walk: Command[] = [
    { type: "mark_advanced", stepId: "stp_done" },
    { type: "record", event: "branch.evaluated", nodeId: "ok", data: { result: true } },
    call,
    { ...call, nodeId: "other", lane: "slow", kind: "model_draft" },
  ];

  it("keeps the walk's timeline order and claims only the first step on the worker's lane", () => {
    const rows = statementRows(prepare(walk, { ...at, claim: { lane: "io", leaseMs: 10_000 } }), effectKinds());
    if (!rows) throw new Error("expected rows");
    expect(rows.advanced).toEqual(["stp_done"]);
    expect(rows.events.map((e) => e.type)).toEqual(["branch.evaluated", "step.scheduled"]);
    expect(rows.steps.map((s) => [s.nodeId, s.status])).toEqual([
      ["call", "running"],
      ["other", "ready"],
    ]);
    expect(rows.outbox.map((o) => o.payload)).toEqual([{ orgId: "org_1", runId: "run_1", stepId: rows.steps[1]?.id, lane: "slow" }]);
    expect(rows.claim).toEqual({ stepId: rows.steps[0]?.id, nodeId: "call", iteration: 2, kind: "http_request", leaseMs: 10_000, effect: true });
    expect(rows.finish).toBeNull();
  });

  it("without local dispatch every step gets its wake-up", () => {
    const rows = statementRows(prepare(walk, at), effectKinds());
    expect(rows?.claim).toBeNull();
    expect(rows?.outbox).toHaveLength(2);
  });

  it("counts each edge the walk took, in order, at its from node; the rows name no run (the caller's is the only one), and say whether to keep it (a split's edge)", () => {
    const edges: Command[] = [
      { type: "take_edge", from: "a", label: null, to: "ok" },
      { type: "record", event: "branch.evaluated", nodeId: "ok", data: { result: true } },
      { type: "take_edge", from: "ok", label: "true", to: "pick" },
      { type: "take_edge", from: "pick", label: "A", to: "call", split: true },
      call,
    ];
    expect(statementRows(prepare(edges, at), effectKinds())?.edges).toEqual([
      { nodeId: "a", bucket: "edge::ok", run: false },
      { nodeId: "ok", bucket: "edge:true:pick", run: false },
      { nodeId: "pick", bucket: "edge:A:call", run: true },
    ]);
    expect(statementRows(prepare(walk, at), effectKinds())?.edges).toEqual([]);
  });

  it("ends the run with its timeline row last", () => {
    const done = statementRows(prepare([{ type: "complete_run", nodeId: "end" }], at), effectKinds());
    expect(done).toMatchObject({ finish: { status: "completed", error: null }, events: [{ type: "run.completed", nodeId: "end", worker: "w1" }] });
    const failed = statementRows(prepare([{ type: "fail_run", reason: "step budget", budget: "steps", nodeId: "x" }], at), effectKinds());
    expect(failed?.finish).toEqual({ status: "failed", error: { reason: "step budget", nodeId: "x", budget: "steps" } });
    expect(failed?.events).toMatchObject([{ type: "run.failed", data: { reason: "step budget", budget: "steps" } }]);
  });

  it("is null when a command needs the engine's transaction: a wait, an approval to close, steps to close, a cancel", () => {
    expect(statementRows(prepare([wait], at), effectKinds())).toBeNull();
    expect(statementRows(prepare([{ type: "close_approval", stepId: "s", status: "expired" }], at), effectKinds())).toBeNull();
    expect(statementRows(prepare([{ type: "fail_run", reason: "age", stepIds: ["s"] }], at), effectKinds())).toBeNull();
    expect(statementRows(prepare([{ type: "cancel_run", stepIds: [] }], at), effectKinds())).toBeNull();
  });
});
