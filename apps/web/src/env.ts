import { baseEnv, loadEnv, systemMailEnv } from "@holdfast/core";
import { urlAsRole } from "@holdfast/db";
import { z } from "zod";

/** "1" or "true" is on; unset, "", "0" or "false" is off. */
const flag = z
  .enum(["", "0", "1", "true", "false"])
  .default("0")
  .transform((v) => v === "1" || v === "true");

/**
 * The web app's settings, parsed once. Every field has a default, so `next build` (which loads route modules to
 * collect page data) parses without a deployment environment.
 */
export const webEnv = baseEnv.extend({
  /**
   * The web process's database role: holdfast_web, subject to row-level security (it sees the signed-in user's
   * organisations only). Unset: DATABASE_URL with the user holdfast_web and no password.
   */
  WEB_DATABASE_URL: z.string().url().optional(),
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
  /**
   * The deployment's Slack app for "Add to Slack" (OAuth v2): its client id and secret from the app's Basic
   * Information page. Unset: Settings says Slack cannot be added here and a bot token can still be pasted.
   */
  SLACK_CLIENT_ID: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional()),
  SLACK_CLIENT_SECRET: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional()),
  /** Slack's Web API base (oauth.v2.access, and the installed connection's API address); a local server in tests. */
  SLACK_API_URL: z.string().url().default("https://slack.com/api/"),
  /** Slack's consent page for "Add to Slack". */
  SLACK_AUTHORIZE_URL: z.string().url().default("https://slack.com/oauth/v2/authorize"),
  /**
   * The public address. Session cookies are Secure when it is https, and also for any request that came over https
   * (the request URL, or `X-Forwarded-Proto: https` from a proxy). Unset: http://localhost:PORT.
   */
  HOLDFAST_PUBLIC_URL: z.string().url().optional(),
  /**
   * The deployment's system mailbox, the sweeper's setting (the web never connects to it): set, invitations are
   * emailed to the invited address by the sweeper and the owner never sees their link; unset, the owner is shown the
   * link once to send it themselves. Set it the same for the web and the sweeper.
   */
  HOLDFAST_SYSTEM_SMTP_URL: z.preprocess((v) => (v === "" ? undefined : v), systemMailEnv.shape.HOLDFAST_SYSTEM_SMTP_URL),
  /** Failed sign-ins per account (email) per window before the account is refused with 429. */
  SIGNIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(10),
  /** Failed sign-ins per client address per window before the address is refused with 429. */
  SIGNIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(50),
  /** The throttle's window: counts start at the first failure and lapse this many seconds later. */
  SIGNIN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /**
   * 1: a reverse proxy in front sets X-Forwarded-For and the client address is its last entry. Otherwise the
   * address is the TCP peer's (X-Forwarded-For from the client is ignored: anyone can write it).
   */
  TRUST_PROXY: flag,
  /** A session's absolute lifetime from sign-in. */
  SESSION_DAYS: z.coerce.number().int().min(1).max(365).default(14),
  /** A session not used for this long ends (its idle expiry is pushed forward on use). */
  SESSION_IDLE_MINUTES: z.coerce.number().int().min(5).max(525_600).default(720),
  /** 1: serve POST /api/demo/echo (the demo automation's target). Otherwise it answers 404. */
  HOLDFAST_DEMO_ECHO: flag,
  /** Bearer token for /metrics and the detailed /api/health. Unset: /metrics answers 404, health only ready/not ready. */
  METRICS_TOKEN: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(16).optional()),
});

/** The public address defaults to this process's own port (a web app started on another PORT shows its real URLs). */
const webEnvWithDefaults = webEnv.transform((e) => ({ ...e, HOLDFAST_PUBLIC_URL: e.HOLDFAST_PUBLIC_URL ?? `http://localhost:${e.PORT}` }));

export type WebEnv = z.infer<typeof webEnvWithDefaults>;

export const env: WebEnv = loadEnv(webEnvWithDefaults);

/** The web process's database URL (one rule for its pools): WEB_DATABASE_URL, else DATABASE_URL as holdfast_web. */
export const webDatabaseUrl: string = env.WEB_DATABASE_URL ?? urlAsRole(env.DATABASE_URL, "holdfast_web");
