import type { Db } from "@holdfast/db";
import type { SeededAutomation } from "@holdfast/cli/seed";
import { publish } from "@holdfast/testkit";

/**
 * A benchmark's or the soak's automation, published as the tests publish theirs (testkit's `publish`, without the
 * organisation's publish checks): its connections and members are made after it, and its destinations are the
 * bench's own loopback stand-ins. The product's seed (`holdfast seed`) publishes through the checks.
 */
export function publishBenchAutomation(db: Db, o: { orgSlug: string; orgName?: string; automationSlug: string; automationName?: string; graph: Parameters<typeof publish>[1] }): Promise<SeededAutomation> {
  return publish(db, o.graph, { org: o.orgSlug, automation: o.automationSlug });
}
