import { loadEnv } from "@holdfast/core";
import { engineEnv } from "./env-schema";

export const env = loadEnv(engineEnv);
