import { z } from "zod";
import { sessionsPurgeExpired } from "../../../store/sql/sessions";
import { defaultBatch, defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface SessionPurgeResult {
  /** Sessions past their absolute or idle expiry, deleted. */
  purged: number;
}

/** Session purge: sessions past either expiry are dead rows nobody can use; deleted in bounded batches. */
export const sessionPurge = defineService({
  name: "session-purge",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_SESSION_PURGE_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_SESSION_PURGE_BATCH: setting.batch.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_SESSION_PURGE_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_SESSION_PURGE_BATCH ?? (e.SWEEP_BATCH_SIZE ?? defaultBatch) * 10,
    })),
  async look(tx, s): Promise<SessionPurgeResult> {
    return { purged: await sessionsPurgeExpired(tx, s.batch) };
  },
  report(r, log) {
    if (r.purged) log.debug({ sessionsPurged: r.purged }, "purged expired sessions");
  },
});
