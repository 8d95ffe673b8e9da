import { describe, expect, it } from "vitest";
import { type TimelineEntry, withChainedClaims } from "../src/store/sql/run-events";

const t0 = new Date("2026-12-05T10:00:00.000Z");
const t1 = new Date("2026-12-05T10:00:00.250Z");
type Row = TimelineEntry & { atMicros?: string };
const row = (id: number, at: Date, type: string, more: Partial<Row> = {}): Row => ({
  id: BigInt(id),
  at,
  type,
  stepId: null,
  nodeId: null,
  attempt: null,
  lane: "io",
  worker: "lane-io@host:1",
  data: null,
  ...more,
});
const shown = (rows: Row[]) => withChainedClaims(rows).map((e) => [Number(e.id), e.type, e.stepId, e.attempt, e.worker, e.data]);

describe("a settle's row that claimed the next step (data.chained) reads as that step's own step.claimed", () => {
  it("after the last row of the settle's commit, attempt 1, by the settle's worker, its iteration; chained leaves the settle's data", () => {
    const timeline = withChainedClaims([
      row(1, t0, "step.succeeded", { stepId: "stp_a", nodeId: "a", attempt: 2, data: { chained: { stepId: "stp_b", nodeId: "b", iteration: 3 } } }),
      row(2, t0, "branch.evaluated", { nodeId: "check", data: { result: true } }),
      row(3, t1, "step.failed", { stepId: "stp_b", nodeId: "b", attempt: 1, data: { chained: { stepId: "stp_c", nodeId: "c", iteration: 1 }, code: "http_500" } }),
    ]);
    expect(timeline.map((e) => [Number(e.id), e.type, e.stepId, e.attempt, e.worker, e.data])).toEqual([
      [1, "step.succeeded", "stp_a", 2, "lane-io@host:1", null],
      [2, "branch.evaluated", null, null, "lane-io@host:1", { result: true }],
      [1, "step.claimed", "stp_b", 1, "lane-io@host:1", { iteration: 3 }],
      [3, "step.failed", "stp_b", 1, "lane-io@host:1", { code: "http_500" }],
      [3, "step.claimed", "stp_c", 1, "lane-io@host:1", { iteration: 1 }],
    ]);
    expect(timeline[2]?.at).toEqual(t0);
    expect(timeline[2]?.nodeId).toBe("b");
  });

  it("tells two commits in one millisecond apart by their microseconds, and never shows a claim after its step's own rows", () => {
    const chained = (stepId: string) => ({ chained: { stepId, nodeId: stepId.slice(4), iteration: 1 } });
    const rows = [
      row(1, t0, "step.succeeded", { stepId: "stp_a", attempt: 1, atMicros: "1000", data: chained("stp_b") }),
      row(2, t0, "step.succeeded", { stepId: "stp_b", attempt: 1, atMicros: "1400", data: chained("stp_c") }),
      row(3, t0, "run.completed", { atMicros: "1700" }),
    ];
    expect(shown(rows).map(([id, type, stepId]) => [id, type, stepId])).toEqual([
      [1, "step.succeeded", "stp_a"],
      [1, "step.claimed", "stp_b"],
      [2, "step.succeeded", "stp_b"],
      [2, "step.claimed", "stp_c"],
      [3, "run.completed", null],
    ]);
    // Without microseconds (one millisecond for all), the claimed step's own row still comes after its claim.
    const coarse = rows.map(({ atMicros: _, ...r }) => r);
    expect(shown(coarse).map(([, type, stepId]) => `${type} ${stepId}`).slice(0, 3)).toEqual(["step.succeeded stp_a", "step.claimed stp_b", "step.succeeded stp_b"]);
  });

  it("reads chained only on a step's settle row by a worker, in the claim's own shape; anything else is left as it is", () => {
    const rows = [
      row(1, t0, "run.started", { data: { chained: { stepId: "stp_x", nodeId: "x", iteration: 1 } } }),
      row(2, t0, "step.succeeded", { stepId: "stp_a", data: { chained: "soon" } }),
      row(3, t0, "step.succeeded", { stepId: "stp_b", worker: null, data: { chained: { stepId: "stp_y", nodeId: "y", iteration: 1 } } }),
      row(4, t0, "step.failed", { stepId: "stp_c", data: { next: { stepId: "stp_z", nodeId: "z", iteration: 1 } } }),
    ];
    expect(withChainedClaims(rows)).toEqual(rows);
  });
});
