import { z } from "zod";
import { budgetsSettleAbandoned } from "../../../store/sql/budgets";
import { defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface BudgetReapingResult {
  /** Model budget reservations whose attempt ended without a settle, counted as spent. */
  settled: number;
}

/**
 * Budget reaping: a model budget reservation older than `afterSeconds` whose attempt is over without a settle (the
 * worker died mid-call, no effect in flight under a live lease) is counted as spent: the call may have been
 * charged. At most 100 per run (the statement's bound).
 */
export const budgetReaping = defineService({
  name: "budget-reaping",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_BUDGET_REAPING_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_BUDGET_REAPING_AFTER_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600).describe("Model budget reservations whose attempt ended without a settle are counted as spent after this (seconds)"),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_BUDGET_REAPING_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      afterSeconds: e.SWEEP_BUDGET_REAPING_AFTER_SECONDS,
    })),
  async look(tx, s): Promise<BudgetReapingResult> {
    return { settled: await budgetsSettleAbandoned(tx, s.afterSeconds) };
  },
  report(r, log) {
    if (r.settled) log.info({ abandoned: r.settled }, "settled abandoned model budget reservations");
  },
});
