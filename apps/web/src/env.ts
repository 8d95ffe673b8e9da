import { loadEnv } from "@holdfast/core/base";
import { urlAsRole } from "@holdfast/db";
import type { z } from "zod";
import { webEnv } from "./env-schema";

/** The public address defaults to this process's own port (a web app started on another PORT shows its real URLs). */
const webEnvWithDefaults = webEnv.transform((e) => ({ ...e, HOLDFAST_PUBLIC_URL: e.HOLDFAST_PUBLIC_URL ?? `http://localhost:${e.PORT}` }));

export type WebEnv = z.infer<typeof webEnvWithDefaults>;

export const env: WebEnv = loadEnv(webEnvWithDefaults);

/** The web process's database URL (one rule for its pools): WEB_DATABASE_URL, else DATABASE_URL as holdfast_web. */
export const webDatabaseUrl: string = env.WEB_DATABASE_URL ?? urlAsRole(env.DATABASE_URL, "holdfast_web");
