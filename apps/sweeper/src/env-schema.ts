import { baseEnv } from "@holdfast/core/base";
import { systemMailEnv } from "@holdfast/core/providers";
import { z } from "zod";

/**
 * The sweeper process's own settings; its maintenance services read theirs from the same environment
 * (sweepServicesEnv: each service's module holds its variables). `pnpm docs:settings` documents both.
 */
export const sweeperEnv = baseEnv
  .extend({
    LEADER_LEASE_MS: z.coerce
      .number()
      .int()
      .min(200)
      .max(600_000)
      .default(10_000)
      .describe("The leader's lease (ms): a standby sweeper takes over this long after the leader stops renewing"),
  })
  .extend(systemMailEnv.shape);
