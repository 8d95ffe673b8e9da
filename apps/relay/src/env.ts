import { loadEnv } from "@holdfast/core/base";
import { relayEnv } from "./env-schema";

export const env = loadEnv(relayEnv);
