import { z } from "zod";
import { runsFindStalled } from "../../../store/sql/runs-sweep";
import { defaultBatch, defaultIntervalMs, defaultStaleSeconds, defineService, type RunRef, setting, sweepSharedEnv } from "../service";

export interface StalledRunsResult {
  /** Running runs quiet for the stale interval with no way forward and no unsent outbox row, given a `run.wake`. */
  rewoken: number;
  runs: RunRef[];
}

/**
 * Stalled runs: a running run with no open step, no unsent outbox row and no progress for `staleSeconds` (a settled
 * step whose run.wake was lost) gets a fresh `run.wake` and a `run.rewoken` event, at most once per interval
 * (`swept_at`). A parked step counts as open: a run parked for a day waits for a person and gains no rows
 * (`runsFindStalled` decides that).
 */
export const stalledRuns = defineService({
  name: "stalled-runs",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_STALLED_RUNS_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_STALLED_RUNS_BATCH: setting.batch.optional(),
      SWEEP_STALLED_RUNS_STALE_SECONDS: setting.staleSeconds.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_STALLED_RUNS_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_STALLED_RUNS_BATCH ?? e.SWEEP_BATCH_SIZE ?? defaultBatch,
      staleSeconds: e.SWEEP_STALLED_RUNS_STALE_SECONDS ?? e.SWEEP_STALE_SECONDS ?? defaultStaleSeconds,
    })),
  async look(tx, s): Promise<StalledRunsResult> {
    const runs = await runsFindStalled(tx, s.staleSeconds, s.batch);
    return { rewoken: runs.length, runs: runs.map(({ orgId, runId }) => ({ orgId, runId })) };
  },
  full: (r, s) => r.rewoken >= s.batch,
  report(r, log) {
    for (const run of r.runs) log.info({ what: "run_rewoken", ...run }, "sweep repaired a run: run_rewoken");
  },
});
