import { z } from "zod";
import { countChangesFold, countChangesPending } from "../../../store/sql/count-changes";
import { defaultBatch, defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface CountFoldResult {
  /** Rows of journey count changes folded into journey_counts (a count_tallies row sums many changes). */
  folded: number;
  /** Either table had more than this pass took. */
  full: boolean;
  /** How far behind the fold is after this pass: rows still waiting (counted up to 100,000). */
  pending: number;
  /** The oldest change this pass folded, its age (ms); null when it folded none. */
  oldestAgeMs: number | null;
}

/** A backlog is counted up to this many changes: a count of a huge one would cost more than the fold. */
const pendingUpTo = 100_000;

/**
 * The journey counts' fold (issue 43): count_changes, written in the transaction of each change, are summed into
 * journey_counts a bounded batch at a time, in one statement that deletes what it adds (store/sql/count-changes.ts),
 * so each change is counted exactly once whether two sweepers fold (they take turns) or one dies midway; reads sum both in one
 * snapshot, so a backlog makes no count wrong, only the read a little slower. A full batch runs again at once.
 */
export const countFold = defineService({
  name: "count-fold",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_COUNT_FOLD_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_COUNT_FOLD_BATCH: setting.batch.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_COUNT_FOLD_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      // A change is a small row summed in SQL: twenty times the sweeper-wide batch.
      batch: e.SWEEP_COUNT_FOLD_BATCH ?? (e.SWEEP_BATCH_SIZE ?? defaultBatch) * 20,
    })),
  async look(tx, s): Promise<CountFoldResult> {
    const fold = await countChangesFold(tx, s.batch);
    return { ...fold, pending: await countChangesPending(tx, pendingUpTo) };
  },
  full: (r) => r.full,
  report(r, log) {
    if (r.folded) log.debug({ countsFolded: r.folded, countsPending: r.pending, oldestChangeAgeMs: r.oldestAgeMs }, "folded journey count changes");
  },
});
