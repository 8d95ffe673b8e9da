import { loadEnv } from "@holdfast/core/base";
import { mailInEnv } from "./env-schema";

export const env = loadEnv(mailInEnv);
