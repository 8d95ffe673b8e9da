import { baseEnv } from "@holdfast/core/base";
import { systemMailEnv } from "@holdfast/core/providers";
import { z } from "zod";
import { slackAuthorizeUrlDefault } from "./server/slack-urls";

/** "1" or "true" is on; unset, "", "0" or "false" is off. */
const flag = z
  .enum(["", "0", "1", "true", "false"])
  .default("0")
  .transform((v) => v === "1" || v === "true");

/** An optional setting where empty is unset. */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema);

/**
 * The web app's settings. Every field has a default, so `next build` (which loads route modules to collect page data)
 * parses without a deployment environment. docs/operations.md "Settings" and .env.example are generated from the
 * descriptions and defaults here (`pnpm docs:settings`).
 */
export const webEnv = baseEnv.extend({
  WEB_DATABASE_URL: z
    .string()
    .url()
    .optional()
    .describe("The web process's database URL, as holdfast_web under row-level security; unset = DATABASE_URL with the user holdfast_web and no password"),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000).describe("The web app's port (the CLI and `pnpm start` use it for the demo's URLs too)"),
  MAX_WEBHOOK_BYTES: z.coerce.number().int().min(1).default(262_144).describe("Largest webhook body accepted, in bytes of the raw body"),
  // The provider's inbound route is configured with it; without it the endpoint would accept forged replies.
  INBOUND_EMAIL_TOKEN: z
    .string()
    .min(16)
    .optional()
    .describe("Bearer token for POST /api/signals/email (inbound email replies); unset = the endpoint refuses every request"),
  SLACK_SIGNING_SECRET: z
    .string()
    .min(1)
    .optional()
    .describe("The Slack app's signing secret (POST /api/slack/interactions); unset = Slack clicks are refused"),
  SLACK_CLIENT_ID: unsetIfEmpty(z.string().min(1).optional()).describe(
    "The deployment's Slack app client id for \"Add to Slack\" (OAuth v2); unset = Settings says Slack cannot be added here (a bot token can still be pasted)",
  ),
  SLACK_CLIENT_SECRET: unsetIfEmpty(z.string().min(1).optional()).describe("The Slack app's client secret for \"Add to Slack\", with SLACK_CLIENT_ID"),
  SLACK_API_URL: z
    .string()
    .url()
    .default("https://slack.com/api/")
    .describe("Slack's Web API base (oauth.v2.access and the installed connection's API address); a local server in tests"),
  SLACK_AUTHORIZE_URL: z.string().url().default(slackAuthorizeUrlDefault).describe("Slack's consent page for \"Add to Slack\""),
  // Cookies are also Secure for any request that came over https (the request URL, or X-Forwarded-Proto: https).
  HOLDFAST_PUBLIC_URL: z
    .string()
    .url()
    .optional()
    .describe("The web app's public address: session cookies are Secure when it is https; Slack messages and trigger URLs link to it; unset = http://localhost:PORT"),
  // The sweeper's setting (the web never connects to it): set, invitations are emailed by the sweeper and the owner never
  // sees their link; unset, the owner is shown the link once to send it themselves. Set it the same for both.
  HOLDFAST_SYSTEM_SMTP_URL: unsetIfEmpty(systemMailEnv.shape.HOLDFAST_SYSTEM_SMTP_URL),
  SIGNIN_MAX_FAILURES_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(10)
    .describe("Failed sign-ins per account (email) per window before the account is refused with 429"),
  SIGNIN_MAX_FAILURES_PER_ADDRESS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(50)
    .describe("Failed sign-ins per client address per window before the address is refused with 429"),
  SIGNIN_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(900)
    .describe("The sign-in throttle's window (seconds): counts start at the first failure and lapse this long after"),
  TRUST_PROXY: flag.describe(
    "1 behind a reverse proxy that appends the client address to X-Forwarded-For (its last entry is used); otherwise the TCP peer's address",
  ),
  SESSION_DAYS: z.coerce.number().int().min(1).max(365).default(14).describe("A session's absolute lifetime from sign-in (days)"),
  SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(5)
    .max(525_600)
    .default(720)
    .describe("A session not used for this long ends (minutes; pushed forward on use)"),
  HOLDFAST_DEMO_ECHO: flag.describe("1 = serve POST /api/demo/echo (the demo automation's target; `pnpm start` sets it); otherwise it answers 404"),
  METRICS_TOKEN: unsetIfEmpty(z.string().min(16).optional()).describe(
    "Bearer token for /metrics and the detailed /api/health; unset = /metrics answers 404, health says only ready/not ready",
  ),
});
