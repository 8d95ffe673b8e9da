import type { Db, Tx } from "@holdfast/db";
import { z } from "zod";
import { HoldfastError } from "../../base/errors";
import { journeyCountsRunsOpen, journeyCountsRunsSettled, type RunAtCount } from "../../store/sql/journey-counts";
import { countWindows, sinceHoursOf } from "./journey-counts";

/**
 * The runs behind a step's count on the canvas, newest first, a page at a time: 'now' and 'held' are the runs with
 * a step at the node in that state now; 'passed', 'failed' and 'cancelled' the runs whose step there settled so
 * within the window's days; 'converted' the runs that converted with their step there closed (and 'cancelled' leaves
 * them out, as the counts do). Test runs are never listed. It reads runs through an index, newest first, and stops at
 * the page's end (store/sql/journey-counts.ts).
 */

export const runsAtCountQuery = z.object({
  orgId: z.string().min(1),
  automationId: z.string().min(1),
  versionId: z.string().min(1).nullable(),
  nodeId: z.string().min(1),
  bucket: z.enum(["now", "held", "passed", "failed", "cancelled", "converted"]),
  window: z.enum(countWindows),
  limit: z.number().int().min(1).max(200),
  cursor: z.string().max(200).nullish(),
});
export type RunsAtCountQuery = z.input<typeof runsAtCountQuery>;

export type { RunAtCount };
export interface RunsAtCountPage {
  runs: RunAtCount[];
  /** Pass it back as `cursor` for the next page; null: this was the last. */
  nextCursor: string | null;
}

const openStatuses = { now: ["ready", "running", "waiting"], held: ["parked"] } as const;
/** The step's status, and whether its run converted (null: either way). */
const settledAs = {
  passed: { status: "done", converted: null },
  failed: { status: "failed", converted: null },
  cancelled: { status: "cancelled", converted: false },
  converted: { status: "cancelled", converted: true },
} as const;

export class InvalidCursorError extends HoldfastError {
  constructor() {
    super("invalid_cursor", "this list's page marker is not one it gave out: open the list again from the start");
  }
}

export async function runsAtCount(db: Db | Tx, query: RunsAtCountQuery): Promise<RunsAtCountPage> {
  const q = runsAtCountQuery.parse(query);
  const base = { orgId: q.orgId, automationId: q.automationId, versionId: q.versionId, nodeId: q.nodeId, limit: q.limit };
  if (q.bucket === "now" || q.bucket === "held") {
    const runs = await journeyCountsRunsOpen(db, { ...base, statuses: [...openStatuses[q.bucket]], before: q.cursor ?? null });
    const last = runs.at(-1);
    return { runs, nextCursor: runs.length === q.limit && last ? last.runId : null };
  }
  const runs = await journeyCountsRunsSettled(db, {
    ...base,
    ...settledAs[q.bucket],
    sinceHours: sinceHoursOf(q.window),
    before: q.cursor ? settledCursor(q.cursor) : null,
  });
  const last = runs.at(-1);
  return { runs, nextCursor: runs.length === q.limit && last ? `${last.startedAtExact}|${last.runId}` : null };
}

function settledCursor(cursor: string): { startedAt: string; runId: string } {
  const cut = cursor.indexOf("|");
  const startedAt = cursor.slice(0, cut);
  if (cut < 0 || !isInstant(startedAt)) throw new InvalidCursorError();
  return { startedAt, runId: cursor.slice(cut + 1) };
}

/**
 * True for an instant as PostgreSQL writes a timestamptz (`2026-12-05 04:45:06.123456+00`) that it also reads back:
 * the shape alone would let a made-up marker (month 13, 30 February, hour 99) through to the cast, whose error is
 * the database's, not this list's.
 */
function isInstant(text: string): boolean {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d{1,6})?[+-](\d\d)(:?(\d\d))?$/.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours] = [m[1], m[2], m[3], m[4], m[5], m[6], m[8]].map(Number) as number[];
  const daysInMonth = new Date(Date.UTC(year ?? 0, month ?? 0, 0)).getUTCDate();
  return (year ?? 0) >= 1 && (month ?? 0) >= 1 && (month ?? 0) <= 12 && (day ?? 0) >= 1 && (day ?? 0) <= daysInMonth
    && (hour ?? 0) <= 23 && (minute ?? 0) <= 59 && (second ?? 0) <= 59 && (offsetHours ?? 0) <= 15 && Number(m[10] ?? 0) <= 59;
}
