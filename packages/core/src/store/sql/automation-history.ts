import type { Tx } from "@holdfast/db";
import type { AutomationStatus, PauseMode, PauseRuns } from "./automations";

export type HistoryAction = "pause" | "resume" | "archive" | "restore" | "stop_runs" | "fire_wait";

export interface HistoryEntry {
  id: string;
  at: Date;
  by: string;
  action: HistoryAction;
  fromStatus: AutomationStatus;
  toStatus: AutomationStatus;
  pauseMode: PauseMode | null;
  pauseRuns: PauseRuns | null;
  reason: string | null;
  detail: Record<string, unknown> | null;
}

export async function automationHistoryInsert(
  tx: Tx,
  orgId: string,
  automationId: string,
  e: Omit<HistoryEntry, "id" | "at">,
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO automation_history (org_id, automation_id, by, action, from_status, to_status, pause_mode, pause_runs, reason, detail)
    VALUES (${orgId}, ${automationId}, ${e.by.slice(0, 200)}, ${e.action}, ${e.fromStatus}, ${e.toStatus}, ${e.pauseMode}, ${e.pauseRuns},
            ${e.reason === null ? null : e.reason.slice(0, 500)}, ${e.detail ? JSON.stringify(e.detail) : null}::jsonb)`;
}

/** Newest first. */
export function automationHistoryList(tx: Tx, orgId: string, automationId: string, limit = 50): Promise<HistoryEntry[]> {
  return tx.$queryRaw<HistoryEntry[]>`
    SELECT id, at, by, action, from_status AS "fromStatus", to_status AS "toStatus", pause_mode AS "pauseMode",
           pause_runs AS "pauseRuns", reason, detail
    FROM automation_history WHERE org_id = ${orgId} AND automation_id = ${automationId}
    ORDER BY seq DESC LIMIT ${limit}`;
}
