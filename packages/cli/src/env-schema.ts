import { baseEnv } from "@holdfast/core/base";
import { z } from "zod";

/** The CLI's settings (`pnpm holdfast ...`); `pnpm docs:settings` documents them with the processes'. */
export const cliEnv = baseEnv
  .extend({
    // Described in the web's schema; `pnpm start` passes it on: the demo's echo URL and trigger URLs default to it.
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    DEMO_ECHO_URL: z
      .string()
      .url()
      .optional()
      .describe(
        "The demo's HTTP step target (`pnpm holdfast seed` and every `pnpm start` publish the demo with it); unset = http://127.0.0.1:PORT/api/demo/echo",
      ),
    // Described in the web's schema: trigger URLs are printed under it; default http://localhost:PORT.
    HOLDFAST_PUBLIC_URL: z.string().url().optional(),
    MIGRATE_DATABASE_URL: z
      .string()
      .url()
      .optional()
      .describe(
        "`pnpm holdfast migrate` as the schema's owner, which creates the other roles (superuser, or CREATEROLE + BYPASSRLS); unset = DATABASE_URL with the user postgres",
      ),
    // Described in the web's schema: migrate gives holdfast_web the password written in it, if any.
    WEB_DATABASE_URL: z.string().url().optional(),
    HOLDFAST_DEBUG: z.string().optional().describe("1 = the CLI prints a failure's stack trace"),
  })
  .transform((e) => ({
    ...e,
    DEMO_ECHO_URL: e.DEMO_ECHO_URL ?? `http://127.0.0.1:${e.PORT}/api/demo/echo`,
    HOLDFAST_PUBLIC_URL: e.HOLDFAST_PUBLIC_URL ?? `http://localhost:${e.PORT}`,
  }));
