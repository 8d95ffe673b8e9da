import { loadEnv } from "@holdfast/core";
import { mailInEnv } from "./env-schema";

export const env = loadEnv(mailInEnv);
