import { z } from "zod";
import { stepsRewakeStale } from "../../../store/sql/steps-sweep";
import { defaultBatch, defaultIntervalMs, defaultStaleSeconds, defineService, type StepRef, setting, sweepSharedEnv } from "../service";

export interface StaleWakeupsResult {
  /** Ready steps due for longer than the stale interval with no unsent outbox row, given a fresh wake-up. */
  rewoken: number;
  steps: StepRef[];
}

/**
 * Stale wake-ups: a ready step due for longer than `staleSeconds` and never claimed lost its wake-up (a Redis
 * restart, a dropped job); it gets a fresh `step.ready` and a `step.rewoken` event, at most once per interval.
 */
export const staleWakeups = defineService({
  name: "stale-wakeups",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_STALE_WAKEUPS_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_STALE_WAKEUPS_BATCH: setting.batch.optional(),
      SWEEP_STALE_WAKEUPS_STALE_SECONDS: setting.staleSeconds.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_STALE_WAKEUPS_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_STALE_WAKEUPS_BATCH ?? e.SWEEP_BATCH_SIZE ?? defaultBatch,
      staleSeconds: e.SWEEP_STALE_WAKEUPS_STALE_SECONDS ?? e.SWEEP_STALE_SECONDS ?? defaultStaleSeconds,
    })),
  async look(tx, s): Promise<StaleWakeupsResult> {
    const woken = await stepsRewakeStale(tx, s.staleSeconds, s.batch);
    return { rewoken: woken.length, steps: woken.map(({ orgId, runId, stepId }) => ({ orgId, runId, stepId })) };
  },
  full: (r, s) => r.rewoken >= s.batch,
  report(r, log) {
    for (const step of r.steps) log.info({ what: "step_rewoken", ...step }, "sweep repaired a run: step_rewoken");
  },
});
