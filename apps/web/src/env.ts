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
  /** The Slack app's signing secret: interactivity requests (POST /api/slack/interactions) are verified with it. */
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  /** Session cookies are marked Secure unless the app is served over plain http (local development, tests). */
  HOLDFAST_PUBLIC_URL: z.string().url().default("http://localhost:3000"),
});

export type WebEnv = z.infer<typeof webEnv>;

export const env: WebEnv = loadEnv(webEnv);
