import { baseEnv, loadEnv, sweepServicesEnv, systemMailEnv } from "@holdfast/core";
import { z } from "zod";

export const env = loadEnv(
  baseEnv.extend({
    LEADER_LEASE_MS: z.coerce.number().int().min(200).max(600_000).default(10_000),
  }).extend(systemMailEnv.shape),
);

/**
 * The maintenance services with their settings from the same environment: each service's module
 * (packages/core/src/sweeper/services/) holds its variables and defaults; docs/operations.md lists them.
 */
export const services = loadEnv(sweepServicesEnv);
