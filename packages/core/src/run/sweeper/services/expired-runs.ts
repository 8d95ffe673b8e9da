import { z } from "zod";
import { runsWakeExpired } from "../../../store/sql/runs-sweep";
import { defaultBatch, defaultIntervalMs, defaultStaleSeconds, defineService, type RunRef, setting, sweepSharedEnv } from "../service";

export interface ExpiredRunsResult {
  /** Running runs past their age budget, woken so the engine's walk stops them with the reason. */
  woken: number;
  runs: RunRef[];
}

/**
 * Expired runs: a running run past its age budget (`expires_at`), however quiet (a long wait), gets a `run.wake`
 * so the engine stops it with the reason; at most once per `staleSeconds` per run (`swept_at`).
 */
export const expiredRuns = defineService({
  name: "expired-runs",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_EXPIRED_RUNS_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_EXPIRED_RUNS_BATCH: setting.batch.optional(),
      SWEEP_EXPIRED_RUNS_STALE_SECONDS: setting.staleSeconds.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_EXPIRED_RUNS_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_EXPIRED_RUNS_BATCH ?? e.SWEEP_BATCH_SIZE ?? defaultBatch,
      staleSeconds: e.SWEEP_EXPIRED_RUNS_STALE_SECONDS ?? e.SWEEP_STALE_SECONDS ?? defaultStaleSeconds,
    })),
  async look(tx, s): Promise<ExpiredRunsResult> {
    const runs = await runsWakeExpired(tx, s.staleSeconds, s.batch);
    return { woken: runs.length, runs: runs.map(({ orgId, runId }) => ({ orgId, runId })) };
  },
  report(r, log) {
    for (const run of r.runs) log.info({ what: "run_expired", ...run }, "sweep repaired a run: run_expired");
  },
});
