import { baseEnv, loadEnv } from "@holdfast/core";
import { z } from "zod";

export const env = loadEnv(
  baseEnv.extend({
    INBOUND_SMTP_HOST: z.string().default("127.0.0.1"),
    INBOUND_SMTP_PORT: z.coerce.number().int().min(0).max(65_535).default(2525),
    /** Largest message accepted, in bytes (SMTP SIZE). */
    INBOUND_SMTP_MAX_BYTES: z.coerce.number().int().min(1_024).default(10 * 1024 * 1024),
  }),
);
