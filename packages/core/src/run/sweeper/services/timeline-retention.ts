import { z } from "zod";
import { runEventsDeleteOfRuns, runEventsInsert } from "../../../store/sql/run-events";
import { runsMarkTimelineRemovedIfEmpty, runsTakeTimelineExpired } from "../../../store/sql/runs-sweep";
import { defaultBatch, defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface TimelineRetentionResult {
  /** Runs whose timeline is now gone (each marked, with one timeline.removed row saying after how many days). */
  runs: number;
  /** Timeline rows deleted. */
  deleted: number;
}

/**
 * Timeline retention: a finished run's `run_events` (its timeline) are the bulk of what runs write, and nobody acts
 * on them once the run is over; after `retentionDays` they are deleted, a bounded batch at a time, so disk grows with
 * the retention window, not with age. The run, its steps and its effects stay: they are the record (the run page
 * tells its story from them, and an effect's row must outlive any retry). 0 keeps every timeline.
 *
 * Each pass locks at most `runs` finished runs (SKIP LOCKED) and deletes at most `batch` of their rows by primary
 * key; a run whose rows are all gone is marked and gets one `timeline.removed` row in the same commit. A running
 * run is never touched: its rows are the ones being written. A full batch does not run again at once: the cost is
 * at most `batch` rows per interval (5000 per 2 s by default, about 750 steps/s of timelines), a backlog drains at
 * that pace and never takes the machine from the steps (docs/performance.md, cost as data grows).
 */
export const timelineRetention = defineService({
  name: "timeline-retention",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_TIMELINE_RETENTION_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_TIMELINE_RETENTION_BATCH: setting.batch.optional(),
      SWEEP_TIMELINE_RETENTION_RUNS: z.coerce.number().int().min(1).max(10_000).default(100).describe("Finished runs whose timelines are removed per pass, oldest first"),
      RUN_EVENTS_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30).describe("Finished runs' timelines (run_events) are removed after this many days (0 keeps them); runs, steps and effects stay"),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_TIMELINE_RETENTION_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      // Timeline rows deleted per pass: ten times the sweeper-wide batch, as outbox-retention.
      batch: e.SWEEP_TIMELINE_RETENTION_BATCH ?? (e.SWEEP_BATCH_SIZE ?? defaultBatch) * 10,
      runs: e.SWEEP_TIMELINE_RETENTION_RUNS,
      retentionDays: e.RUN_EVENTS_RETENTION_DAYS,
    })),
  async look(tx, s, ctx): Promise<TimelineRetentionResult> {
    if (s.retentionDays === 0) return { runs: 0, deleted: 0 };
    const picked = await runsTakeTimelineExpired(tx, s.retentionDays, s.runs);
    if (picked.length === 0) return { runs: 0, deleted: 0 };
    const deleted = await runEventsDeleteOfRuns(
      tx,
      picked.map((r) => r.id),
      s.batch,
    );
    // Runs the batch did not finish keep their lock-free remainder for the next pass.
    const done = await runsMarkTimelineRemovedIfEmpty(
      tx,
      picked.map((r) => r.id),
    );
    await runEventsInsert(
      tx,
      done.map((r) => ({ orgId: r.orgId, runId: r.id, type: "timeline.removed", worker: ctx.actor, data: { retentionDays: s.retentionDays } })),
    );
    return { runs: done.length, deleted };
  },
  report(r, log) {
    if (r.deleted || r.runs) log.debug({ timelinesRemoved: r.runs, timelineRowsDeleted: r.deleted }, "removed finished runs' timelines past their retention");
  },
});
