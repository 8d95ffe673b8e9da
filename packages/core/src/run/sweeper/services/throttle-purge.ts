import { z } from "zod";
import { signinThrottlePurgeExpired } from "../../../store/sql/signin-throttle";
import { defaultBatch, defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface ThrottlePurgeResult {
  /** Sign-in throttle counters lapsed over an hour ago, deleted. */
  purged: number;
}

/** Throttle purge: the sign-in throttle's counters lapsed over an hour ago (beyond any clock difference), deleted. */
export const throttlePurge = defineService({
  name: "throttle-purge",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_THROTTLE_PURGE_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_THROTTLE_PURGE_BATCH: setting.batch.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_THROTTLE_PURGE_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_THROTTLE_PURGE_BATCH ?? (e.SWEEP_BATCH_SIZE ?? defaultBatch) * 10,
    })),
  async look(tx, s): Promise<ThrottlePurgeResult> {
    return { purged: await signinThrottlePurgeExpired(tx, s.batch) };
  },
  report(r, log) {
    if (r.purged) log.debug({ throttlePurged: r.purged }, "purged lapsed sign-in counters");
  },
});
