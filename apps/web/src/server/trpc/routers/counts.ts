import { countWindows, journeyCounts } from "@holdfast/core/run";
import { automationVersionsPublishedOne, automationVersionsPublishedPair } from "@holdfast/core/store";
import { graphSchema } from "@holdfast/core/versions";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { minPathRuns, scoreSplits } from "../../journey-scores";
import { router, viewerProcedure } from "../init";
import { automationId, ownAutomation } from "./common";

export const journeyCountsInput = automationId.extend({
  /** A published version's number (a PostgreSQL integer); null: every version together (drawn on the newest version's graph). */
  version: z.number().int().min(1).max(2_147_483_647).nullable(),
  window: z.enum(countWindows),
});

/**
 * How a journey performs: the counts of core's read (run/counts: folded and not yet folded changes in one statement,
 * O(steps), never a scan of the runs) with the graph they are drawn on. Scoped by `ctx.org.id`: another
 * organisation's automation is "not found".
 */
export const counts = router({
  journey: viewerProcedure.input(journeyCountsInput).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    const shown = await shownVersion(ctx.db, ctx.org.id, input.automationId, input.version);
    if (!shown) return { published: false as const };
    const counts = await journeyCounts(ctx.db, { orgId: ctx.org.id, automationId: input.automationId, versionId: input.version === null ? null : shown.id, window: input.window });
    return { published: true as const, version: shown.version, graph: graphSchema.parse(shown.graph), counts, splitScores: scoreSplits(counts.splits), minPathRuns };
  }),
});

/** The version whose graph the counts are drawn on: the one asked for, or the newest published one. */
async function shownVersion(db: Parameters<typeof ownAutomation>[0], orgId: string, automationId: string, version: number | null) {
  if (version !== null) {
    const [row] = await automationVersionsPublishedPair(db, orgId, automationId, version, version);
    if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `version ${version} is not published` });
    return row;
  }
  const newest = await automationVersionsPublishedOne(db, orgId, automationId);
  if (!newest) return undefined;
  const [row] = await automationVersionsPublishedPair(db, orgId, automationId, newest.version, newest.version);
  return row;
}
