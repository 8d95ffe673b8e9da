import { baseEnv } from "@holdfast/core/base";
import { z } from "zod";

/** The inbound SMTP receiver's settings (`pnpm docs:settings` documents them; `pnpm start` runs it when INBOUND_SMTP_PORT is set). */
export const mailInEnv = baseEnv.extend({
  INBOUND_SMTP_HOST: z.string().default("127.0.0.1").describe("Address the inbound SMTP receiver listens on"),
  INBOUND_SMTP_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .default(2525)
    .describe("Port of the inbound SMTP receiver (replies to reply+<token>@INBOUND_EMAIL_DOMAIN); `pnpm start` runs mail-in only when set"),
  INBOUND_SMTP_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .default(10 * 1024 * 1024)
    .describe("Largest message accepted, in bytes (SMTP SIZE)"),
});
