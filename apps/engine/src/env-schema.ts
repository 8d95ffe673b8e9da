import { baseEnv } from "@holdfast/core/base";
import { z } from "zod";

/** The engine's settings (docs/operations.md "Settings" and .env.example are generated from these: `pnpm docs:settings`). */
export const engineEnv = baseEnv.extend({
  // A run wake-up holds one database connection while it walks (beyond DB_POOL_SIZE they wait for one); a timer's job
  // waits for its batch without one (TIMER_FIRE_BATCH_MAX), so this is also how many timers one batch can gather.
  ENGINE_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(32)
    .describe("Jobs one engine handles at once (run wake-ups and timers' fast-path jobs)"),
  // 1: each timer alone, its firing and its walk in two transactions.
  TIMER_FIRE_BATCH_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(500)
    .default(64)
    .describe("Timers' fast-path jobs fired and walked together in one transaction, at most (1 = each alone)"),
});
