import { describe, expect, it } from "vitest";
import { parseGraph } from "../src/versions/graph";
import { planAfterSettle } from "../src/decide/walk/plan";
import type { RunState, StepState } from "../src/decide/walk/walk";

const graph = parseGraph({
  nodes: [
    { id: "t", kind: "trigger" },
    { id: "a", kind: "http_request", config: { url: "http://127.0.0.1:1/a" } },
    { id: "ok", kind: "branch", config: { condition: { path: "steps.a.output.status", op: "eq", value: 200 } } },
    { id: "b", kind: "http_request", config: { url: "http://127.0.0.1:1/b" } },
    { id: "e", kind: "end" },
  ],
  edges: [
    { from: "t", to: "a" },
    { from: "a", to: "ok" },
    { from: "ok", to: "b", label: "true" },
    { from: "ok", to: "e", label: "false" },
    { from: "b", to: "e" },
  ],
});
const running = (over: Partial<StepState> = {}): StepState => ({
  id: "s_a",
  nodeId: "a",
  iteration: 1,
  status: "running",
  output: null,
  error: null,
  advanced: false,
  leased: true,
  ...over,
});
const seen = (steps: StepState[], over: Partial<RunState> = {}): RunState => ({ id: "r", status: "running", input: {}, cancelRequested: false, steps, ...over });

describe("the walk a worker makes with its settle", () => {
  it("walks through the branch on the step's own output and schedules the next step", () => {
    expect(planAfterSettle(graph, seen([running()]), { stepId: "s_a", status: "done", output: { status: 200 }, error: null })).toEqual([
      { type: "mark_advanced", stepId: "s_a" },
      { type: "take_edge", from: "a", label: null, to: "ok" },
      { type: "record", event: "branch.evaluated", nodeId: "ok", data: { result: true } },
      { type: "take_edge", from: "ok", label: "true", to: "b" },
      { type: "schedule_step", nodeId: "b", kind: "http_request", lane: "io", iteration: 1, maxAttempts: 8 },
    ]);
  });

  it("finishes the run inline when the walk reaches an end, and fails it when the step failed", () => {
    const done = planAfterSettle(graph, seen([running()]), { stepId: "s_a", status: "done", output: { status: 500 }, error: null });
    expect(done?.at(-1)).toEqual({ type: "complete_run", nodeId: "e" });
    const failed = planAfterSettle(graph, seen([running()]), { stepId: "s_a", status: "failed", output: null, error: { code: "x" } });
    expect(failed?.at(-1)).toMatchObject({ type: "fail_run", reason: "step a failed" });
  });

  it("leaves the walk to the engine when the run is being cancelled or another step is open or unwalked", () => {
    const settled = { stepId: "s_a", status: "done" as const, output: { status: 200 }, error: null };
    expect(planAfterSettle(graph, seen([running()], { cancelRequested: true }), settled)).toBeNull();
    const other = running({ id: "s_x", nodeId: "b", status: "ready", leased: false });
    expect(planAfterSettle(graph, seen([running(), other]), settled)).toBeNull();
    const unwalked = running({ id: "s_y", nodeId: "b", status: "done", leased: false, advanced: false });
    expect(planAfterSettle(graph, seen([running(), unwalked]), settled)).toBeNull();
  });
});
