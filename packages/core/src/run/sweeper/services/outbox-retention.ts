import { z } from "zod";
import { outboxDeleteSentBefore } from "../../../store/sql/outbox";
import { defaultBatch, defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface OutboxRetentionResult {
  /** Sent outbox rows older than the retention, deleted. */
  deleted: number;
}

/** Outbox retention: sent rows older than `retentionSeconds` are history nobody reads; deleted in bounded batches. */
export const outboxRetention = defineService({
  name: "outbox-retention",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_OUTBOX_RETENTION_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_OUTBOX_RETENTION_BATCH: setting.batch.optional(),
      OUTBOX_RETENTION_SECONDS: z.coerce.number().int().min(60).default(86_400).describe("Sent outbox rows are deleted after this (seconds, at least 60)"),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_OUTBOX_RETENTION_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      // Deletes are cheap per row: ten times the sweeper-wide batch.
      batch: e.SWEEP_OUTBOX_RETENTION_BATCH ?? (e.SWEEP_BATCH_SIZE ?? defaultBatch) * 10,
      retentionSeconds: e.OUTBOX_RETENTION_SECONDS,
    })),
  async look(tx, s): Promise<OutboxRetentionResult> {
    return { deleted: await outboxDeleteSentBefore(tx, s.retentionSeconds, s.batch) };
  },
  report(r, log) {
    if (r.deleted) log.debug({ outboxDeleted: r.deleted }, "deleted sent outbox rows past their retention");
  },
});
