import { countWindows, InvalidCursorError, journeyCounts, runsAtCount } from "@holdfast/core/run";
import { automationsFindBySlug, automationVersionsPublishedOne, automationVersionsPublishedPair, type RunListItem, runsListForOrgs } from "@holdfast/core/store";
import { graphSchema } from "@holdfast/core/versions";
import type { Db } from "@holdfast/db";
import { z } from "zod";
import { type StepBucket, stepBuckets } from "../app/automations/[id]/canvas/counts-model";

/**
 * The runs list's "at" filter: the runs behind one count on the canvas (a step, a state, a window, the shown version
 * or all), read through core's runsAtCount (an index, a page at a time), with the count itself from the same read
 * the canvas makes. Scoped by the user's membership of the organisation named: another organisation's is not found.
 */
export const runsAtFilters = z.object({
  org: z.string().min(1).max(100),
  automation: z.string().max(100).regex(/^[a-z0-9-]+$/),
  // Past a PostgreSQL integer it names no version: as unreadable as "abc" (all versions), never the database's error.
  version: z.coerce.number().int().min(1).max(2_147_483_647).optional().catch(undefined),
  at: z.string().min(1).max(100).regex(/^[A-Za-z0-9_-]+$/),
  state: z.enum(stepBuckets),
  window: z.enum(countWindows).catch("7d"),
  cursor: z.string().max(200).optional().catch(undefined),
});
export type RunsAtFilters = z.infer<typeof runsAtFilters>;

export interface RunsAt {
  orgSlug: string;
  automationSlug: string;
  automationName: string;
  version: number | null;
  nodeId: string;
  stepTitle: string;
  state: StepBucket;
  window: RunsAtFilters["window"];
  /** The count the canvas shows for this step and state. */
  count: number;
  runs: (RunListItem & { at: Date })[];
  nextCursor: string | null;
  /** The page marker was not one the list gave out: the list starts again from the newest. */
  restarted: boolean;
}

export async function runsAt(db: Db, memberships: { orgId: string; orgSlug: string }[], f: RunsAtFilters, pageSize = 100): Promise<RunsAt | null> {
  const m = memberships.find((x) => x.orgSlug === f.org);
  if (!m) return null;
  const automation = await automationsFindBySlug(db, m.orgId, f.automation);
  if (!automation) return null;
  const shown = f.version !== undefined ? (await automationVersionsPublishedPair(db, m.orgId, automation.id, f.version, f.version))[0] : await automationVersionsPublishedOne(db, m.orgId, automation.id);
  if (!shown) return null;
  // A version asked for: its counts; none: all versions' (the step's name from the newest).
  const versionId = f.version !== undefined && "id" in shown ? (shown.id as string) : null;
  const graph = graphSchema.safeParse(shown.graph);
  const node = graph.success ? graph.data.nodes.find((n) => n.id === f.at) : undefined;
  const query = { orgId: m.orgId, automationId: automation.id, versionId, nodeId: f.at, bucket: f.state, window: f.window, limit: pageSize };
  const [counts, page] = await Promise.all([journeyCounts(db, { orgId: m.orgId, automationId: automation.id, versionId, window: f.window }), firstOrNext(db, query, f.cursor)]);
  const details = page.page.runs.length ? await runsListForOrgs(db, [m.orgId], { ids: page.page.runs.map((r) => r.runId) }, pageSize) : [];
  const byId = new Map(details.map((r) => [r.id, r]));
  const runs = page.page.runs.flatMap((r) => {
    const d = byId.get(r.runId);
    return d ? [{ ...d, at: r.at }] : [];
  });
  return {
    orgSlug: m.orgSlug,
    automationSlug: f.automation,
    automationName: automation.name,
    version: f.version ?? null,
    nodeId: f.at,
    stepTitle: node?.name?.trim() || f.at,
    state: f.state,
    window: f.window,
    count: counts.nodes[f.at]?.[f.state] ?? 0,
    runs,
    nextCursor: page.page.nextCursor,
    restarted: page.restarted,
  };
}

/** A marker the list did not give out (edited by hand, or from an older page) starts the list again from the newest. */
async function firstOrNext(db: Db, query: Parameters<typeof runsAtCount>[1], cursor: string | undefined) {
  try {
    return { page: await runsAtCount(db, { ...query, cursor: cursor ?? null }), restarted: false };
  } catch (error) {
    if (!(error instanceof InvalidCursorError) || cursor === undefined) throw error;
    return { page: await runsAtCount(db, { ...query, cursor: null }), restarted: true };
  }
}
