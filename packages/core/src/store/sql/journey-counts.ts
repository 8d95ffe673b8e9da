import type { Db, Tx } from "@holdfast/db";

/**
 * Journey counts (issue 43): how many runs are at each step of an automation now, passed through it, failed, are held
 * or cancelled there, took each edge. journey_counts holds the count_changes and count_tallies the sweeper folded (store/sql/count-changes.ts);
 * a read sums them and the changes not folded yet in one statement, so it sees one snapshot: exact at every instant,
 * whatever the fold does meanwhile. It reads O(nodes x buckets x days) rows and never the runs.
 */

/** One summed bucket: node '' is the run itself. */
export interface CountRow {
  versionId: string;
  nodeId: string;
  bucket: string;
  n: number;
}

export interface CountsRead {
  rows: CountRow[];
  /** Changes of this scope not folded yet, and the instant of the oldest (null: none). */
  pending: number;
  oldestPendingAt: Date | null;
  /** The database clock of the read. */
  at: Date;
}

/**
 * The counts of an automation (one version's steps and edges, or every version's when `versionId` is null; the run
 * level, node '', of every version always, for the versions list). 'now' and 'held' are in minus out over all days;
 * every other bucket counts what happened on the UTC days the window touches (`sinceHours` back from now(); null: all).
 */
export async function journeyCountsRead(
  db: Db | Tx,
  q: { orgId: string; automationId: string; versionId: string | null; sinceHours: number | null },
): Promise<CountsRead> {
  const rows = await db.$queryRaw<{ versionId: string; nodeId: string; bucket: string; n: number; at: Date | null }[]>`
    WITH v AS (
      SELECT id FROM automation_versions WHERE org_id = ${q.orgId} AND automation_id = ${q.automationId}
    ), since AS (
      SELECT CASE WHEN ${q.sinceHours}::int IS NULL THEN NULL
                  ELSE ((now() - make_interval(hours => ${q.sinceHours}::int)) AT TIME ZONE 'UTC')::date END AS day
    ), pending AS (
      SELECT c.version_id, c.node_id, c.from_bucket, c.to_bucket, c.at, 1 AS n FROM count_changes c
      WHERE c.version_id IN (SELECT id FROM v) AND c.org_id = ${q.orgId}
        AND (${q.versionId}::text IS NULL OR c.version_id = ${q.versionId}::text OR c.node_id = '')
      UNION ALL
      SELECT t.version_id, t.node_id, t.from_bucket, t.to_bucket, t.at, t.n FROM count_tallies t
      WHERE t.version_id IN (SELECT id FROM v) AND t.org_id = ${q.orgId}
        AND (${q.versionId}::text IS NULL OR t.version_id = ${q.versionId}::text OR t.node_id = '')
    ), counted AS (
      SELECT version_id, node_id, bucket, day, n FROM journey_counts
      WHERE org_id = ${q.orgId} AND automation_id = ${q.automationId}
        AND (${q.versionId}::text IS NULL OR version_id = ${q.versionId}::text OR node_id = '')
      UNION ALL
      SELECT p.version_id, p.node_id, b.bucket, (p.at AT TIME ZONE 'UTC')::date, b.n
      FROM pending p CROSS JOIN LATERAL (VALUES (p.to_bucket, p.n), (p.from_bucket, -p.n)) AS b(bucket, n)
      WHERE b.bucket IS NOT NULL
    )
    SELECT c.version_id AS "versionId", c.node_id AS "nodeId", c.bucket, sum(c.n)::float8 AS n, NULL::timestamptz AS at
    FROM counted c, since
    WHERE c.bucket IN ('now', 'held') OR since.day IS NULL OR c.day >= since.day
    GROUP BY 1, 2, 3
    UNION ALL
    -- Runs in flight, over all days: started, reopened (a failed run retried) or moved in by a version migration, less
    -- every end and every move out.
    SELECT c.version_id, '', 'now',
           sum(CASE WHEN c.bucket IN ('started', 'running', 'moved_in') THEN c.n
                    WHEN c.bucket IN ('completed', 'failed', 'cancelled', 'converted', 'moved_out') THEN -c.n ELSE 0 END)::float8, NULL
    FROM counted c WHERE c.node_id = '' GROUP BY 1
    UNION ALL
    SELECT '', '', '#pending', COALESCE(sum(n), 0)::float8, min(at) FROM pending
    UNION ALL
    SELECT '', '', '#now', 0, now()`;
  let pending = 0;
  let oldestPendingAt: Date | null = null;
  let at = new Date(0);
  const counts: CountRow[] = [];
  for (const r of rows) {
    if (r.bucket === "#pending") {
      pending = r.n;
      oldestPendingAt = r.at;
    } else if (r.bucket === "#now") {
      at = r.at ?? at;
    } else if (r.n !== 0) {
      counts.push({ versionId: r.versionId, nodeId: r.nodeId, bucket: r.bucket, n: r.n });
    }
  }
  return { rows: counts, pending, oldestPendingAt, at };
}

/** A run behind a step's count. */
export interface RunAtCount {
  runId: string;
  runStatus: string;
  startedAt: Date;
  stepId: string;
  stepStatus: string;
  /** When the step settled (passed, failed, cancelled), else when it last changed. */
  at: Date;
  /** The run's start to the microsecond (a Date keeps milliseconds): the page marker. */
  startedAtExact: string;
}

/**
 * The runs behind a step's 'now' or 'held' count: running runs of the automation (runs_automation_running_idx, newest
 * id first) with a step at `nodeId` in that state now. Paged by run id: `before` is the last page's last run id.
 */
export function journeyCountsRunsOpen(
  db: Db | Tx,
  q: { orgId: string; automationId: string; versionId: string | null; nodeId: string; statuses: string[]; before: string | null; limit: number },
): Promise<RunAtCount[]> {
  return db.$queryRaw<RunAtCount[]>`
    SELECT r.id AS "runId", r.status AS "runStatus", r.created_at AS "startedAt", s.id AS "stepId", s.status AS "stepStatus",
           s.updated_at AS at, r.created_at::text AS "startedAtExact"
    FROM runs r
    CROSS JOIN LATERAL (
      SELECT id, status, updated_at FROM steps
      WHERE run_id = r.id AND node_id = ${q.nodeId} AND status = ANY(${q.statuses}::text[])
      ORDER BY iteration DESC LIMIT 1
    ) s
    WHERE r.org_id = ${q.orgId} AND r.automation_id = ${q.automationId} AND r.status = 'running' AND NOT r.test
      AND (${q.versionId}::text IS NULL OR r.version_id = ${q.versionId}::text)
      AND (${q.before}::text IS NULL OR r.id < ${q.before}::text)
    ORDER BY r.id DESC
    LIMIT ${q.limit}`;
}

/**
 * The runs behind a step's 'passed', 'failed', 'cancelled' or 'converted' count: runs of the organisation newest first
 * (runs_org_id_created_at_idx) of the automation whose step at `nodeId` settled in that state within the window's
 * days; `converted` true keeps only converted runs, false leaves them out (a step closed by a conversion counts as
 * 'converted', not 'cancelled'). Paged by (run start, run id): `before` is the last page's last run.
 */
export function journeyCountsRunsSettled(
  db: Db | Tx,
  q: {
    orgId: string;
    automationId: string;
    versionId: string | null;
    nodeId: string;
    status: string;
    converted: boolean | null;
    sinceHours: number | null;
    before: { startedAt: string; runId: string } | null;
    limit: number;
  },
): Promise<RunAtCount[]> {
  return db.$queryRaw<RunAtCount[]>`
    WITH since AS (
      SELECT CASE WHEN ${q.sinceHours}::int IS NULL THEN NULL
                  ELSE ((now() - make_interval(hours => ${q.sinceHours}::int)) AT TIME ZONE 'UTC')::date AT TIME ZONE 'UTC' END AS at
    )
    SELECT r.id AS "runId", r.status AS "runStatus", r.created_at AS "startedAt", s.id AS "stepId", s.status AS "stepStatus",
           s.settled_at AS at, r.created_at::text AS "startedAtExact"
    FROM since, runs r
    CROSS JOIN LATERAL (
      SELECT id, status, settled_at FROM steps
      WHERE run_id = r.id AND node_id = ${q.nodeId} AND status = ${q.status}
      ORDER BY iteration DESC LIMIT 1
    ) s
    WHERE r.org_id = ${q.orgId} AND r.automation_id = ${q.automationId} AND NOT r.test
      AND (${q.versionId}::text IS NULL OR r.version_id = ${q.versionId}::text)
      AND (since.at IS NULL OR s.settled_at >= since.at)
      AND (${q.converted}::boolean IS NULL OR (r.status = 'converted') = ${q.converted}::boolean)
      AND (${q.before?.startedAt ?? null}::timestamptz IS NULL
           OR (r.created_at, r.id) < (${q.before?.startedAt ?? null}::timestamptz, ${q.before?.runId ?? null}::text))
    ORDER BY r.created_at DESC, r.id DESC
    LIMIT ${q.limit}`;
}
