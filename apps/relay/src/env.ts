import { baseEnv, loadEnv } from "@holdfast/core";
import { z } from "zod";

export const env = loadEnv(
  baseEnv.extend({
    RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(200),
    /** Poll interval when no NOTIFY arrives: the backstop for a missed notification. */
    RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  }),
);
