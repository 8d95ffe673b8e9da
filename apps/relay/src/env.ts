import { loadEnv } from "@holdfast/core";
import { relayEnv } from "./env-schema";

export const env = loadEnv(relayEnv);
