import { z } from "zod";
import { repairLostWaits } from "../../ops/doctor";
import { stepsWaitingWithoutTimer } from "../../../store/sql/steps-sweep";
import { defaultBatch, defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface MissingTimersResult {
  /** Waits whose timer row was gone, given it back (a `timer.recreated` event each). */
  recreated: number;
}

/**
 * Missing timers (the doctor's first check): a waiting step of a running run with no pending timer gets its timer
 * back, from the node's rule anchored at the step's start, or the approval's deadline.
 */
export const missingTimers = defineService({
  name: "missing-timers",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_MISSING_TIMERS_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_MISSING_TIMERS_BATCH: setting.batch.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_MISSING_TIMERS_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_MISSING_TIMERS_BATCH ?? e.SWEEP_BATCH_SIZE ?? defaultBatch,
    })),
  // The look finds them; each is repaired in a transaction of its own, under its step's lock.
  look: (tx, s) => stepsWaitingWithoutTimer(tx, s.batch),
  async act(ctx, _s, lost): Promise<MissingTimersResult> {
    return { recreated: lost.length ? await repairLostWaits(ctx.db, ctx.graphs, ctx.actor, lost) : 0 };
  },
  report(r, log) {
    if (r.recreated) log.info({ timersRecreated: r.recreated }, "sweep found stopped work: waits without a timer");
  },
});
