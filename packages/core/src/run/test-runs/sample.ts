import type { Db } from "@holdfast/db";
import type { FlowGraph } from "../../versions/kinds/flow";
import { sampleOf } from "../../versions/kinds/variables";
import { automationsSampleInput } from "../../store/sql/automations";
import { automationVersionsPublished } from "../../store/sql/automation-versions";

/**
 * What a Test run starts with: the automation's sample (a delivery's payload) over the newest published version's
 * declared fields and typed sample, so a Test run needs no delivery first. Null: neither (the caller says what to do).
 */
export async function testRunSample(db: Db, orgId: string, automationId: string): Promise<Record<string, unknown> | null> {
  const { sample: delivered } = await automationsSampleInput(db, orgId, automationId);
  const [newest] = await automationVersionsPublished(db, orgId, automationId);
  const sample = newest ? sampleOf(newest.graph as FlowGraph, delivered) : delivered;
  return sample !== null && typeof sample === "object" && !Array.isArray(sample) && Object.keys(sample).length > 0 ? (sample as Record<string, unknown>) : null;
}
