import { baseEnv, loadEnv } from "@holdfast/core";
import { z } from "zod";

/**
 * The web app's settings, parsed once. Every field has a default, so `next build` (which loads route modules to
 * collect page data) parses without a deployment environment.
 */
export const webEnv = baseEnv.extend({
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  /** Largest webhook body accepted, in bytes of the raw body. */
  MAX_WEBHOOK_BYTES: z.coerce.number().int().min(1).default(262_144),
  /**
   * Bearer token the inbound-email webhook (POST /api/signals/email) must carry; the provider's inbound route is
   * configured with it. Unset: the endpoint refuses every request (it would otherwise accept forged replies).
   */
  INBOUND_EMAIL_TOKEN: z.string().min(16).optional(),
});

export type WebEnv = z.infer<typeof webEnv>;

export const env: WebEnv = loadEnv(webEnv);
