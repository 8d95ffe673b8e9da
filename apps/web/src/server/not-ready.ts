import { connectionFailureOf } from "@holdfast/core/run";
import { failureFor } from "./failure";

/** Why the figures could not be read, in words an operator acts on (never the driver's text; the log has it). */
export function notReadyBecause(error: unknown): { error: string; reference?: string } {
  const service = connectionFailureOf(error);
  if (service === "database") return { error: "PostgreSQL does not answer this process: check that it runs and that DATABASE_URL reaches it" };
  if (service === "redis") return { error: "Redis does not answer this process: check that it runs and that REDIS_URL (or REDIS_CLUSTER_NODES, for a cluster) reaches it" };
  if (service === "network") return { error: "PostgreSQL or Redis does not answer this process: check that both run and that their URLs reach them" };
  const failure = failureFor(error, "health");
  return { error: failure.message, ...(failure.reference ? { reference: failure.reference } : {}) };
}
