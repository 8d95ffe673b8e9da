import { baseEnv, loadEnv } from "@holdfast/core";
import { z } from "zod";

export const env = loadEnv(
  baseEnv.extend({
    RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(200),
    /** Poll interval when no NOTIFY arrives: the backstop for a missed notification. */
    RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
    /**
     * How long a due step.ready row is left to its lane's workers, which LISTEN and take it from the outbox
     * themselves, before the relay publishes it (the backstop: all workers busy, a lost notification, none
     * listening); the relay is not told of these rows and finds them by its poll (RELAY_POLL_MS). 0: the relay
     * LISTENs on the lanes' channels too and publishes them at once (for lane workers with LISTEN_DISPATCH=off).
     */
    RELAY_STEP_READY_GRACE_MS: z.coerce.number().int().min(0).max(60_000).default(200),
  }),
);
