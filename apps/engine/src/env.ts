import { baseEnv, loadEnv } from "@holdfast/core";
import { z } from "zod";

export const env = loadEnv(
  baseEnv.extend({
    /**
     * Jobs handled at once by this process. A run wake-up holds one database connection while it walks (beyond
     * DB_POOL_SIZE they wait for one); a timer's job waits for its batch without one (TIMER_FIRE_BATCH_MAX), so this
     * is also how many timers one batch can gather. 8 before the timers were batched.
     */
    ENGINE_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(32),
    /**
     * Timers' fast-path jobs that arrive while a batch is in flight go together: fired and their runs walked in one
     * transaction, up to this many (at most ENGINE_CONCURRENCY arrive at once). 1: each timer alone, its firing and
     * its walk in two transactions (the behaviour before).
     */
    TIMER_FIRE_BATCH_MAX: z.coerce.number().int().min(1).max(500).default(64),
  }),
);
