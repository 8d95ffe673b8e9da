import { z } from "zod";
import { approvalsRewakeNotify } from "../../../store/sql/approvals";
import { defaultBatch, defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface OwedNotificationsResult {
  /** Approvals whose Slack post or update was owed and not taken (lost wake-up, dead notifier, Slack down), woken again. */
  rewoken: number;
}

/**
 * Owed notifications: an approval's Slack post or update not finished within the human lane's lease
 * (`APPROVAL_NOTIFY_LEASE_SECONDS`, the lane worker reads the same value) is woken again.
 */
export const owedNotifications = defineService({
  name: "owed-notifications",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_OWED_NOTIFICATIONS_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_OWED_NOTIFICATIONS_BATCH: setting.batch.optional(),
      APPROVAL_NOTIFY_LEASE_SECONDS: z.coerce.number().min(0.1).max(3_600).default(30),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_OWED_NOTIFICATIONS_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_OWED_NOTIFICATIONS_BATCH ?? e.SWEEP_BATCH_SIZE ?? defaultBatch,
      leaseSeconds: e.APPROVAL_NOTIFY_LEASE_SECONDS,
    })),
  async look(tx, s): Promise<OwedNotificationsResult> {
    return { rewoken: await approvalsRewakeNotify(tx, s.batch, s.leaseSeconds) };
  },
  report(r, log) {
    if (r.rewoken) log.info({ notifiesRewoken: r.rewoken }, "sweep found stopped work: Slack notifications owed");
  },
});
