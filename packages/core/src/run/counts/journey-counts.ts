import type { Db, Tx } from "@holdfast/db";
import { z } from "zod";
import { automationVersionsAll } from "../../store/sql/automation-versions";
import { type CountRow, journeyCountsRead } from "../../store/sql/journey-counts";
import { splitPaths } from "../../versions/kinds/split";

/**
 * The counts on the canvas (issue 43): for the shown version (or all versions) and a window, how many runs are at
 * each step now, passed through it, failed, are held, were cancelled or converted there, took each edge, what became of the
 * emails a step sent, how each split's paths did. Test runs are never counted. The read sums the folded counts and
 * the changes not folded yet in one statement (store/sql/journey-counts.ts): O(steps x days), never a scan of runs.
 * Windows are whole UTC days: "24h" is the days the last 24 hours touch (yesterday and today), and so on.
 */

export const countWindows = ["24h", "7d", "30d", "all"] as const;
export type CountWindow = (typeof countWindows)[number];
const windowHours: Record<CountWindow, number | null> = { "24h": 24, "7d": 7 * 24, "30d": 30 * 24, all: null };
export const sinceHoursOf = (w: CountWindow): number | null => windowHours[w];

export const journeyCountsQuery = z.object({
  orgId: z.string().min(1),
  automationId: z.string().min(1),
  versionId: z.string().min(1).nullable(),
  window: z.enum(countWindows),
});
export type JourneyCountsQuery = z.infer<typeof journeyCountsQuery>;

export interface EmailCounts {
  sent: number;
  delivered: number;
  bounced: number;
  opened: number;
  clicked: number;
  replied: number;
  unsubscribed: number;
}
export interface NodeCounts {
  now: number;
  held: number;
  passed: number;
  failed: number;
  cancelled: number;
  /** Runs whose step here was closed because the run converted (its goal was met while it was here). */
  converted: number;
  email: null | EmailCounts;
}
export interface SplitPathCounts {
  path: string;
  n: number;
  replied: number;
  clicked: number;
  converted: number;
}
export interface JourneyCounts {
  nodes: Record<string, NodeCounts>;
  edges: { from: string; label: string | null; to: string; n: number }[];
  runs: { started: number; completed: number; failed: number; cancelled: number; converted: number; now: number };
  versions: { versionId: string; version: number; started: number; converted: number; now: number }[];
  splits: Record<string, { paths: SplitPathCounts[] }>;
  /** Changes not folded yet (summed into this read all the same): how far behind the fold is. */
  pendingChanges: number;
  /** Everything that happened before this instant is folded (the oldest pending change's instant, else the read's). */
  foldedAt: Date | null;
}

const emailBuckets = ["sent", "delivered", "bounced", "opened", "clicked", "replied", "unsubscribed"] as const;
const stepBuckets = ["now", "held", "passed", "failed", "cancelled", "converted"] as const;
const runEnds = ["completed", "failed", "cancelled", "converted"] as const;

const noEmail = (): EmailCounts => ({ sent: 0, delivered: 0, bounced: 0, opened: 0, clicked: 0, replied: 0, unsubscribed: 0 });
const noNode = (email: boolean): NodeCounts => ({ now: 0, held: 0, passed: 0, failed: 0, cancelled: 0, converted: 0, email: email ? noEmail() : null });

interface GraphLike {
  nodes?: { id: string; kind: string; config?: unknown }[];
}

export async function journeyCounts(db: Db | Tx, query: JourneyCountsQuery): Promise<JourneyCounts> {
  const q = journeyCountsQuery.parse(query);
  const [versions, read] = await Promise.all([
    automationVersionsAll(db, q.orgId, q.automationId),
    journeyCountsRead(db, { orgId: q.orgId, automationId: q.automationId, versionId: q.versionId, sinceHours: sinceHoursOf(q.window) }),
  ]);
  const shown = versions.filter((v) => q.versionId === null || v.id === q.versionId);
  const counts: JourneyCounts = {
    nodes: {},
    edges: [],
    runs: { started: 0, completed: 0, failed: 0, cancelled: 0, converted: 0, now: 0 },
    versions: [],
    splits: {},
    pendingChanges: read.pending,
    foldedAt: read.oldestPendingAt ?? (read.rows.length > 0 ? read.at : null),
  };
  // Every node of the shown graphs, newest version first (its kind wins), at zero until counted.
  for (const v of shown) {
    for (const node of (v.graph as GraphLike).nodes ?? []) {
      counts.nodes[node.id] ??= noNode(node.kind === "send_email");
      if (node.kind === "split" && !counts.splits[node.id]) {
        const paths = splitPaths((node.config ?? { paths: {} }) as { paths: Record<string, number> });
        counts.splits[node.id] = { paths: paths.map((p) => ({ path: p.label, n: 0, replied: 0, clicked: 0, converted: 0 })) };
      }
    }
  }
  const shownIds = new Set(shown.map((v) => v.id));
  const perVersion = new Map<string, Record<string, number>>();
  for (const row of read.rows) {
    if (row.nodeId === "") {
      const b = perVersion.get(row.versionId) ?? {};
      b[row.bucket] = (b[row.bucket] ?? 0) + row.n;
      perVersion.set(row.versionId, b);
    } else if (shownIds.has(row.versionId)) {
      addNodeRow(counts, row);
    }
  }
  for (const v of versions) {
    const b = perVersion.get(v.id) ?? {};
    // Runs in flight over all days, whatever the window (the read's run-level 'now').
    const now = b.now ?? 0;
    counts.versions.push({ versionId: v.id, version: v.version, started: b.started ?? 0, converted: b.converted ?? 0, now });
    if (!shownIds.has(v.id)) continue;
    counts.runs.started += b.started ?? 0;
    for (const end of runEnds) counts.runs[end] += b[end] ?? 0;
    counts.runs.now += now;
  }
  fillSplits(counts);
  counts.edges.sort((a, b) => a.from.localeCompare(b.from) || (a.label ?? "").localeCompare(b.label ?? "") || a.to.localeCompare(b.to));
  return counts;
}

function addNodeRow(counts: JourneyCounts, row: CountRow): void {
  const node = (counts.nodes[row.nodeId] ??= noNode(false));
  if ((stepBuckets as readonly string[]).includes(row.bucket)) {
    node[row.bucket as (typeof stepBuckets)[number]] += row.n;
  } else if (row.bucket.startsWith("email:")) {
    const what = row.bucket.slice("email:".length);
    if ((emailBuckets as readonly string[]).includes(what)) {
      node.email ??= noEmail();
      node.email[what as keyof EmailCounts] += row.n;
    }
  } else if (row.bucket.startsWith("edge:")) {
    // 'edge:<label>:<to>': a label has no ':' (graph.ts edge labels), a node id may.
    const rest = row.bucket.slice("edge:".length);
    const cut = rest.indexOf(":");
    const label = rest.slice(0, cut);
    const to = rest.slice(cut + 1);
    const same = counts.edges.find((e) => e.from === row.nodeId && e.to === to && (e.label ?? "") === label);
    if (same) same.n += row.n;
    else counts.edges.push({ from: row.nodeId, label: label === "" ? null : label, to, n: row.n });
  } else if (row.bucket.startsWith("path:")) {
    const [, path = "", outcome = ""] = row.bucket.split(":");
    const split = (counts.splits[row.nodeId] ??= { paths: [] });
    let p = split.paths.find((x) => x.path === path);
    if (!p) split.paths.push((p = { path, n: 0, replied: 0, clicked: 0, converted: 0 }));
    if (outcome === "replied" || outcome === "clicked" || outcome === "converted") p[outcome] += row.n;
  }
}

/** A split path's count is its edge's: the runs that left the split by it. */
function fillSplits(counts: JourneyCounts): void {
  for (const [nodeId, split] of Object.entries(counts.splits)) {
    for (const e of counts.edges) {
      if (e.from !== nodeId || e.label === null) continue;
      let p = split.paths.find((x) => x.path === e.label);
      if (!p) split.paths.push((p = { path: e.label, n: 0, replied: 0, clicked: 0, converted: 0 }));
      p.n += e.n;
    }
  }
}
