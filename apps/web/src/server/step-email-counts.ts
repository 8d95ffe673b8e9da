import { journeyCounts } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import type { EmailCounts } from "../app/email-rates";

/** A send step's messages and the outcomes they reached. */
export interface StepEmailCounts extends EmailCounts {
  nodeId: string;
}

/**
 * Per send step that has sent, the outcomes its messages reached, over every version and all time (test runs are not
 * counted): read from core's journey counts (folded counts and the changes not folded yet, O(steps)), the same figures
 * the canvas's counts view shows, never a scan of the messages.
 */
export async function stepEmailCounts(db: Db, orgId: string, automationId: string): Promise<StepEmailCounts[]> {
  const { nodes } = await journeyCounts(db, { orgId, automationId, versionId: null, window: "all" });
  return Object.entries(nodes)
    .flatMap(([nodeId, c]) => (c.email && c.email.sent > 0 ? [{ nodeId, ...c.email }] : []))
    .sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
}
