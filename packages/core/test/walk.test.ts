import { describe, expect, it } from "vitest";
import { parseGraph } from "../src/versions/graph";
import { decide, type RunState, type StepState } from "../src/decide/walk/walk";

const graph = parseGraph({
  nodes: [
    { id: "signup", kind: "trigger" },
    { id: "is_pro", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
    { id: "notify", kind: "http_request", config: { url: "http://127.0.0.1:1/x" } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "signup", to: "is_pro" },
    { from: "is_pro", to: "notify", label: "true" },
    { from: "is_pro", to: "done", label: "false" },
    { from: "notify", to: "done" },
  ],
});

const run = (over: Partial<RunState> = {}): RunState => ({
  id: "run_1",
  status: "running",
  input: { plan: "pro" },
  cancelRequested: false,
  steps: [],
  ...over,
});
const step = (over: Partial<StepState>): StepState => ({
  id: "stp_1",
  nodeId: "notify",
  iteration: 1,
  status: "done",
  output: null,
  error: null,
  advanced: false,
  leased: false,
  ...over,
});

describe("decide", () => {
  it("walks a new run through the branch inline, saying each edge it takes, and schedules the first step on its lane", () => {
    expect(decide(graph, run())).toEqual([
      { type: "record", event: "run.walk_started" },
      { type: "take_edge", from: "signup", label: null, to: "is_pro" },
      { type: "record", event: "branch.evaluated", nodeId: "is_pro", data: { result: true } },
      { type: "take_edge", from: "is_pro", label: "true", to: "notify" },
      { type: "schedule_step", nodeId: "notify", kind: "http_request", lane: "io", iteration: 1, maxAttempts: 8 },
    ]);
  });

  it("completes at the end without any step when the branch goes the other way", () => {
    expect(decide(graph, run({ input: { plan: "free" } })).at(-1)).toEqual({ type: "complete_run", nodeId: "done" });
  });

  it("walks on from a settled step once, and a repeated wake-up after that decides nothing", () => {
    expect(decide(graph, run({ steps: [step({})] }))).toEqual([
      { type: "mark_advanced", stepId: "stp_1" },
      { type: "take_edge", from: "notify", label: null, to: "done" },
      { type: "complete_run", nodeId: "done" },
    ]);
    expect(decide(graph, run({ steps: [step({ advanced: true })] }))).toEqual([]);
  });

  it("fails the run when a step failed for good", () => {
    expect(decide(graph, run({ steps: [step({ status: "failed" })] }))).toEqual([
      { type: "mark_advanced", stepId: "stp_1" },
      { type: "fail_run", reason: "step notify failed", nodeId: "notify" },
    ]);
  });

  it("does nothing for a terminal run", () => {
    expect(decide(graph, run({ status: "completed" }))).toEqual([]);
  });

  it("waits for an in-flight effect before cancelling, then cancels the open steps", () => {
    const leased = step({ status: "running", leased: true });
    expect(decide(graph, run({ cancelRequested: true, steps: [leased] }))).toEqual([]);
    const ready = step({ status: "ready" });
    expect(decide(graph, run({ cancelRequested: true, steps: [ready] }))).toEqual([{ type: "cancel_run", stepIds: ["stp_1"] }]);
  });

  it("ends a run whose goal was met as converted at the same safe point: never inside an effect in flight", () => {
    const leased = step({ status: "running", leased: true });
    expect(decide(graph, run({ cancelRequested: true, goalMet: "event", steps: [leased] }))).toEqual([]);
    const waiting = step({ status: "waiting" });
    expect(decide(graph, run({ cancelRequested: true, goalMet: "replied", steps: [waiting] }))).toEqual([{ type: "convert_run", stepIds: ["stp_1"], goal: "replied" }]);
    // Settled and not yet walked on: the goal ends the run there, nothing further is scheduled.
    const settled = step({ status: "done", leased: false });
    expect(decide(graph, run({ cancelRequested: true, goalMet: "clicked", steps: [settled] }))).toEqual([{ type: "convert_run", stepIds: [], goal: "clicked" }]);
  });

  it("gives each visit of a node in a loop its own iteration", () => {
    const loop = parseGraph({
      nodes: [
        { id: "t", kind: "trigger" },
        { id: "poll", kind: "http_request", config: { url: "http://127.0.0.1:1/x" } },
        { id: "again", kind: "branch", config: { condition: { path: "steps.poll.output.status", op: "neq", value: 200 } } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "poll" },
        { from: "poll", to: "again" },
        { from: "again", to: "poll", label: "true" },
        { from: "again", to: "e", label: "false" },
      ],
    });
    const first = step({ id: "s1", nodeId: "poll", iteration: 1, output: { status: 503 } });
    const commands = decide(loop, run({ steps: [first] }));
    expect(commands).toContainEqual(expect.objectContaining({ type: "schedule_step", nodeId: "poll", iteration: 2 }));
    const second = step({ id: "s2", nodeId: "poll", iteration: 2, output: { status: 200 } });
    expect(decide(loop, run({ steps: [{ ...first, advanced: true }, second] })).at(-1)).toEqual({ type: "complete_run", nodeId: "e" });
  });

  it("stops a loop of inline nodes that never reaches a step", () => {
    const spin = parseGraph({
      nodes: [
        { id: "t", kind: "trigger" },
        { id: "a", kind: "branch", config: { condition: { path: "input.x", op: "exists" } } },
        { id: "b", kind: "branch", config: { condition: { path: "input.x", op: "exists" } } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "a" },
        { from: "a", to: "b", label: "true" },
        { from: "a", to: "e", label: "false" },
        { from: "b", to: "a", label: "true" },
        { from: "b", to: "e", label: "false" },
      ],
    });
    const last = decide(spin, run({ input: { x: 1 } })).at(-1);
    expect(last).toMatchObject({ type: "fail_run" });
    expect((last as { reason: string }).reason).toMatch(/loop with no step/);
  });
});
