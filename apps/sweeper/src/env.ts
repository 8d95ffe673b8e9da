import { loadEnv, sweepServicesEnv } from "@holdfast/core";
import { sweeperEnv } from "./env-schema";

export const env = loadEnv(sweeperEnv);

/**
 * The maintenance services with their settings from the same environment: each service's module
 * (packages/core/src/sweeper/services/) holds its variables and defaults; docs/operations.md lists them.
 */
export const services = loadEnv(sweepServicesEnv);
