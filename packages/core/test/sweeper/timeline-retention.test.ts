import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timelineRetention } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

const events = async (runIds: string[]) =>
  (await bed.rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type <> 'timeline.removed'", [runIds]))[0]?.n as number;
const counts = async (runIds: string[]) =>
  (
    await bed.rows(
      `SELECT (SELECT count(*)::int FROM runs WHERE id = ANY($1)) AS runs, (SELECT count(*)::int FROM steps WHERE run_id = ANY($1)) AS steps,
              (SELECT count(*)::int FROM effects WHERE run_id = ANY($1)) AS effects`,
      [runIds],
    )
  )[0];
/** The run ended `daysAgo` days ago, by the database clock. */
const finish = (runIds: string[], status: string, daysAgo: number) =>
  bed.rows("UPDATE runs SET status = $2, finished_at = now() - make_interval(days => $3), updated_at = now() WHERE id = ANY($1)", [runIds, status, daysAgo]);

describe("timeline-retention", () => {
  it("removes finished runs' timelines past the retention in bounded batches; running and recent runs keep theirs, and every run keeps its steps", async () => {
    const old = [await bed.start("call"), await bed.start("call"), await bed.start("wait")].map((r) => r.runId);
    const recent = (await bed.start("call")).runId;
    const running = (await bed.start("wait")).runId;
    await finish(old.slice(0, 1), "completed", 40);
    await finish(old.slice(1, 2), "failed", 35);
    await finish(old.slice(2), "cancelled", 31);
    await finish([recent], "completed", 29);
    // A run started long ago and still going: its rows are the ones being written, whatever their age.
    await bed.rows("UPDATE run_events SET at = now() - interval '90 days' WHERE run_id = $1", [running]);
    await bed.rows("UPDATE runs SET created_at = now() - interval '90 days' WHERE id = $1", [running]);
    const oldRows = await events(old);
    expect(oldRows).toBeGreaterThan(3);
    const keptBefore = { recent: await events([recent]), running: await events([running]) };
    const recordBefore = await counts([...old, recent, running]);

    // Two runs a pass: the two finished longest ago go first.
    const service = timelineRetention.make({ retentionDays: 30, runs: 2, batch: 1_000 });
    const first = await service.runOnce(bed.ctx);
    expect(first.runs).toBe(2);
    // A full batch waits for the next interval: the pace is bounded, a backlog drains at batch rows per interval.
    expect(service.full(first)).toBe(false);
    expect(await events(old.slice(0, 2))).toBe(0);
    expect(await events(old.slice(2))).toBeGreaterThan(0);
    // A batch of rows smaller than a run's timeline: the run is finished on a later pass, marked only then.
    const small = timelineRetention.make({ retentionDays: 30, runs: 10, batch: 1 });
    const third = await events(old.slice(2));
    expect(await small.runOnce(bed.ctx)).toEqual({ runs: 0, deleted: 1 });
    let passes = 1;
    for (let r = { runs: 0, deleted: 1 }; r.runs === 0; passes++) {
      r = await small.runOnce(bed.ctx);
      expect(r.deleted).toBe(1);
    }
    expect(passes).toBe(third);
    expect(first.deleted + third).toBe(oldRows);
    expect(await events(old)).toBe(0);
    expect(await events([recent])).toBe(keptBefore.recent);
    expect(await events([running])).toBe(keptBefore.running);
    expect(await counts([...old, recent, running])).toEqual(recordBefore);
    // Each cleared run says so on what is left of its timeline, and is marked.
    const left = await bed.rows("SELECT run_id, type, worker, data FROM run_events WHERE run_id = ANY($1) ORDER BY run_id", [old]);
    expect(left).toEqual(
      [...old].sort().map((runId) => ({ run_id: runId, type: "timeline.removed", worker: "sweeper", data: { retentionDays: 30 } })),
    );
    expect(await bed.rows("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND timeline_removed_at IS NOT NULL", [old])).toEqual([{ n: 3 }]);
    // Nothing left to do: the marker row stays.
    expect(await service.runOnce(bed.ctx)).toEqual({ runs: 0, deleted: 0 });
  });

  it("0 days keeps every timeline", async () => {
    const run = (await bed.start("call")).runId;
    await finish([run], "completed", 400);
    const before = await events([run]);
    expect(await timelineRetention.make({ retentionDays: 0 }).runOnce(bed.ctx)).toEqual({ runs: 0, deleted: 0 });
    expect(await events([run])).toBe(before);
    await bed.rows("UPDATE runs SET finished_at = now() WHERE id = $1", [run]); // out of the other tests' way
  });

  it("skips a finished run someone holds locked, and takes it on a later pass", async () => {
    const run = (await bed.start("call")).runId;
    await finish([run], "failed", 60);
    const holder = await bed.t.sql.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", [run]);
      expect(await timelineRetention.make({ retentionDays: 30 }).runOnce(bed.ctx)).toEqual({ runs: 0, deleted: 0 });
      await holder.query("COMMIT");
    } finally {
      holder.release();
    }
    const after = await timelineRetention.make({ retentionDays: 30 }).runOnce(bed.ctx);
    expect(after.runs).toBe(1);
    expect(await events([run])).toBe(0);
  });

  it("a run retried after its timeline was removed is a candidate again once it finishes again", async () => {
    const run = (await bed.start("call")).runId;
    await finish([run], "failed", 45);
    expect((await timelineRetention.make({ retentionDays: 30 }).runOnce(bed.ctx)).runs).toBe(1);
    // Retried (finished_at cleared, new rows), then failed again long after: its new rows go too.
    await bed.rows("UPDATE runs SET status = 'running', finished_at = NULL WHERE id = $1", [run]);
    await bed.rows("INSERT INTO run_events (org_id, run_id, type) SELECT org_id, id, 'run.retried' FROM runs WHERE id = $1", [run]);
    expect(await timelineRetention.make({ retentionDays: 30 }).runOnce(bed.ctx)).toEqual({ runs: 0, deleted: 0 });
    await bed.rows("UPDATE runs SET status = 'failed', finished_at = timeline_removed_at + interval '1 second' WHERE id = $1", [run]);
    await bed.rows("UPDATE runs SET timeline_removed_at = timeline_removed_at - interval '40 days', finished_at = finished_at - interval '40 days' WHERE id = $1", [run]);
    expect(await timelineRetention.make({ retentionDays: 30 }).runOnce(bed.ctx)).toEqual({ runs: 1, deleted: 2 });
    expect(await bed.rows("SELECT type FROM run_events WHERE run_id = $1", [run])).toEqual([{ type: "timeline.removed" }]);
  });

  it("reads its settings: 30 days by default, 0 to keep forever, each variable checked", () => {
    expect(timelineRetention.env.parse({})).toEqual({ intervalMs: 2_000, batch: 5_000, runs: 100, retentionDays: 30 });
    expect(timelineRetention.env.parse({ RUN_EVENTS_RETENTION_DAYS: "0", SWEEP_BATCH_SIZE: "50", SWEEP_TIMELINE_RETENTION_RUNS: "7" })).toEqual({
      intervalMs: 2_000,
      batch: 500,
      runs: 7,
      retentionDays: 0,
    });
    expect(timelineRetention.env.safeParse({ RUN_EVENTS_RETENTION_DAYS: "-1" }).success).toBe(false);
    expect(timelineRetention.env.safeParse({ RUN_EVENTS_RETENTION_DAYS: "1.5" }).success).toBe(false);
  });
});
