import { loadEnv } from "@holdfast/core/base";
import { engineEnv } from "./env-schema";

export const env = loadEnv(engineEnv);
