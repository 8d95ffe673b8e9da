import { describe, expect, it } from "vitest";
import { type TimelineEntry, withChainedClaims } from "../src/store/sql/run-events";

const t0 = new Date("2026-12-05T10:00:00.000Z");
const t1 = new Date("2026-12-05T10:00:00.250Z");
const row = (id: number, at: Date, type: string, more: Partial<TimelineEntry> = {}): TimelineEntry => ({
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

describe("a settle's row that claimed the next step (data.next) reads as that step's own step.claimed", () => {
  it("after the last row of the settle's commit, attempt 1, by the settle's worker, its iteration; next leaves the settle's data", () => {
    const timeline = withChainedClaims([
      row(1, t0, "step.succeeded", { stepId: "stp_a", nodeId: "a", attempt: 2, data: { next: { stepId: "stp_b", nodeId: "b", iteration: 3 } } }),
      row(2, t0, "branch.evaluated", { nodeId: "check", worker: "lane-io@host:1", data: { result: true } }),
      row(3, t1, "step.succeeded", { stepId: "stp_b", nodeId: "b", attempt: 1, data: { next: { stepId: "stp_c", nodeId: "c", iteration: 1 }, note: "kept" } }),
    ]);
    expect(timeline.map((e) => [Number(e.id), e.type, e.stepId, e.attempt, e.worker, e.data])).toEqual([
      [1, "step.succeeded", "stp_a", 2, "lane-io@host:1", null],
      [2, "branch.evaluated", null, null, "lane-io@host:1", { result: true }],
      [1, "step.claimed", "stp_b", 1, "lane-io@host:1", { iteration: 3 }],
      [3, "step.succeeded", "stp_b", 1, "lane-io@host:1", { note: "kept" }],
      [3, "step.claimed", "stp_c", 1, "lane-io@host:1", { iteration: 1 }],
    ]);
    expect(timeline[2]?.at).toEqual(t0);
    expect(timeline[2]?.nodeId).toBe("b");
  });

  it("leaves a row alone when its next is not a claim (another shape) and rows without one as they are", () => {
    const rows = [row(1, t0, "run.started", { data: { via: "bench" } }), row(2, t0, "step.succeeded", { data: { next: "soon" } })];
    expect(withChainedClaims(rows)).toEqual(rows);
  });
});
