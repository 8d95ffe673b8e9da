import { loadEnv, requireDatabaseSettings } from "@holdfast/core/base";
import { relayEnv } from "./env-schema";

export const env = loadEnv(relayEnv);
// The relay LISTENs for the outbox's NOTIFY: through a transaction pooler that needs DATABASE_DIRECT_URL.
requireDatabaseSettings(env, "relay", true);
