import { loadEnv } from "@holdfast/core/base";
import { sweepServicesEnv } from "@holdfast/core/run";
import { sweeperEnv } from "./env-schema";

export const env = loadEnv(sweeperEnv);

/**
 * The maintenance services with their settings from the same environment: each service's module
 * (packages/core/src/run/sweeper/services/) holds its variables and defaults; docs/operations.md lists them.
 */
export const services = loadEnv(sweepServicesEnv);
