import { baseEnv } from "@holdfast/core/base";
import { z } from "zod";

/** The relay's settings (docs/operations.md "Settings" and .env.example are generated from these: `pnpm docs:settings`). */
export const relayEnv = baseEnv.extend({
  RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(200).describe("Outbox rows the relay publishes per batch"),
  RELAY_POLL_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(60_000)
    .default(1_000)
    .describe("Poll interval when no NOTIFY arrives (ms): the backstop for a missed notification"),
  // The backstop: all workers busy, a lost notification, none listening. The relay is not told of these rows and finds
  // them by its poll (RELAY_POLL_MS). 0: it LISTENs on the lanes' channels too (for lane workers with LISTEN_DISPATCH=off).
  RELAY_STEP_READY_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(200)
    .describe("A step's wake-up is first its lane workers' to take on NOTIFY; the relay publishes it after this (ms; 0 = at once)"),
});
