import { baseEnv, loadEnv } from "@holdfast/core";
import { z } from "zod";

export const env = loadEnv(
  baseEnv.extend({
    /** Run wake-ups handled at once by this process (each holds one database connection). */
    ENGINE_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  }),
);
