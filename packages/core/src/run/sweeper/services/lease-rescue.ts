import { z } from "zod";
import { stepsReclaimExpired } from "../../../store/sql/steps-sweep";
import { defaultBatch, defaultIntervalMs, defineService, type StepRef, setting, sweepSharedEnv } from "../service";

export interface LeaseRescueResult {
  /** Running steps whose lease lapsed (the worker died or hung), made ready with a fresh wake-up. */
  reclaimed: number;
  steps: StepRef[];
}

/**
 * Lease rescue: a running step whose lease lapsed goes back to ready with a fresh `step.ready` and a
 * `step.lease_expired` event; the old attempt can no longer heartbeat or settle (both need its token).
 */
export const leaseRescue = defineService({
  name: "lease-rescue",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_LEASE_RESCUE_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_LEASE_RESCUE_BATCH: setting.batch.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_LEASE_RESCUE_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_LEASE_RESCUE_BATCH ?? e.SWEEP_BATCH_SIZE ?? defaultBatch,
    })),
  async look(tx, s): Promise<LeaseRescueResult> {
    const woken = await stepsReclaimExpired(tx, s.batch);
    return { reclaimed: woken.length, steps: woken.map(({ orgId, runId, stepId }) => ({ orgId, runId, stepId })) };
  },
  full: (r, s) => r.reclaimed >= s.batch,
  report(r, log) {
    for (const step of r.steps) log.info({ what: "lease_expired", ...step }, "sweep repaired a run: lease_expired");
  },
});
