import type { Tx } from "@holdfast/db";
import type { EdgeCount } from "./plan-rows";

/**
 * count_changes: journey counts' changes, append-only, each written in the transaction of the change it counts (the
 * triggers on steps and runs, the walk's edges here and in holdfast_rows_insert), folded into journey_counts by the
 * sweeper (run/sweeper/services/count-fold.ts). count_tallies: the steps' changes of a settle batch or a set of timers
 * fired, summed in their transaction (one row, n runs: functions/count_tally_start.sql), folded and read with them.
 */

/**
 * The edges the engine's walks took (run/apply/apply.ts), for runs locked in `tx`: one INSERT for all of them, with
 * each run's version, none for a test run; the run named only for an edge that leaves a split (EdgeCount.run).
 */
export async function countChangesInsertEdges(tx: Tx, rows: (EdgeCount & { orgId: string; runId: string })[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRaw`
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
    SELECT r.org_id, r.version_id, CASE WHEN e.run THEN r.id END, e.node_id, e.bucket
    FROM unnest(${rows.map((r) => r.orgId)}::text[], ${rows.map((r) => r.runId)}::text[], ${rows.map((r) => r.nodeId)}::text[],
                ${rows.map((r) => r.bucket)}::text[], ${rows.map((r) => r.run)}::boolean[]) WITH ORDINALITY AS e(org_id, run_id, node_id, bucket, run, n)
    JOIN runs r ON r.id = e.run_id AND r.org_id = e.org_id AND NOT r.test
    ORDER BY e.n`;
}

export interface FoldResult {
  /** Rows folded (deleted from count_changes and count_tallies, and added to journey_counts); a tally is many changes. */
  folded: number;
  /** Either table had more than this fold took: fold again at once. */
  full: boolean;
  /** The oldest folded change's age (ms, by the database clock); null when nothing was folded. */
  oldestAgeMs: number | null;
}

/** The two-key advisory lock space of the fold's turn (44: the frequency cap's, 45: email templates'). */
const foldLockSpace = 46;

/**
 * The fold, in one statement: deletes up to `batch` rows (up to half of them count_tallies', the rest count_changes';
 * a fold that dies rolls back with its deletes) and adds
 * them to journey_counts per version, node, bucket and UTC day (ON CONFLICT DO UPDATE n = n + excluded.n, in key
 * order so two folds never deadlock). Deleting and adding in one statement is what counts each change exactly once; a read sums journey_counts, count_changes and count_tallies in one snapshot.
 * One fold at a time: a fold that finds another folding (its transaction-scoped advisory lock taken) folds nothing
 * and comes back at its next pass. The rows are deleted without locking them first (FOR UPDATE logs a lock record a
 * row, as much WAL as the delete): a fold of an older release, which locks its rows SKIP LOCKED, and this one may
 * pick the same rows, and then one deletes a row and the other, waiting for it, finds the row gone and skips it,
 * so a change is still counted once.
 * A run-level 'outcome:replied' | 'outcome:clicked' | 'converted' change also counts, as 'path:<path>:<outcome>', at
 * each split its run passed: the run's run_split_paths rows (written here when the split's edge is folded) and its
 * split edges not folded yet (written in the same transaction as a conversion, say).
 */
export async function countChangesFold(tx: Tx, batch: number): Promise<FoldResult> {
  const tallyShare = Math.max(1, Math.floor(batch / 2));
  const rows = await tx.$queryRaw<{ folded: number; full: boolean; oldestAgeMs: number | null }[]>`
    WITH turn AS (
      SELECT pg_try_advisory_xact_lock(${foldLockSpace}::int, 0) AS mine
    ), tallied AS (
      -- Up to half the batch of summed rows first, so a backlog of one table never holds up the other's.
      DELETE FROM count_tallies
      WHERE ctid = ANY(ARRAY(SELECT ctid FROM count_tallies WHERE (SELECT mine FROM turn) LIMIT ${tallyShare}))
      RETURNING version_id, node_id, from_bucket, to_bucket, n, at
    ), taken AS (
      -- The rest of the batch: a fold takes at most \`batch\` rows in all.
      DELETE FROM count_changes
      WHERE ctid = ANY(ARRAY(SELECT ctid FROM count_changes WHERE (SELECT mine FROM turn)
                             LIMIT GREATEST(${batch}::int - (SELECT count(*) FROM tallied), 0)))
      RETURNING org_id, version_id, run_id, node_id, from_bucket, to_bucket, at
    ), outcomes AS (
      SELECT run_id, at, CASE to_bucket WHEN 'outcome:replied' THEN 'replied' WHEN 'outcome:clicked' THEN 'clicked' ELSE 'converted' END AS outcome
      FROM taken WHERE node_id = '' AND to_bucket IN ('outcome:replied', 'outcome:clicked', 'converted')
    ), edges AS (
      -- Edges of this fold, and (only for runs with an outcome here) edges still pending: those may leave a split.
      -- An edge that names no run leaves no split (EdgeCount.run in store/sql/plan-rows.ts).
      SELECT org_id, run_id, version_id, node_id, to_bucket FROM taken WHERE to_bucket LIKE 'edge:%' AND run_id IS NOT NULL
      UNION
      SELECT c.org_id, c.run_id, c.version_id, c.node_id, c.to_bucket FROM count_changes c
      WHERE EXISTS (SELECT 1 FROM outcomes) AND c.run_id IN (SELECT run_id FROM outcomes) AND c.to_bucket LIKE 'edge:%'
    ), splits AS (
      SELECT v.id AS version_id, n->>'id' AS node_id
      FROM automation_versions v CROSS JOIN LATERAL jsonb_array_elements(v.graph->'nodes') AS n
      WHERE v.id IN (SELECT DISTINCT version_id FROM edges) AND n->>'kind' = 'split'
    ), split_edges AS (
      SELECT DISTINCT e.org_id, e.run_id, e.version_id, e.node_id, split_part(e.to_bucket, ':', 2) AS path
      FROM edges e JOIN splits s ON s.version_id = e.version_id AND s.node_id = e.node_id
    ), remembered AS (
      INSERT INTO run_split_paths (org_id, run_id, version_id, node_id, path)
      SELECT org_id, run_id, version_id, node_id, path FROM split_edges
      ON CONFLICT DO NOTHING
    ), passed AS (
      SELECT run_id, version_id, node_id, path FROM run_split_paths WHERE run_id IN (SELECT run_id FROM outcomes)
      UNION
      SELECT run_id, version_id, node_id, path FROM split_edges WHERE run_id IN (SELECT run_id FROM outcomes)
    ), moves AS (
      SELECT version_id, node_id, to_bucket AS bucket, at, 1 AS n FROM taken WHERE to_bucket IS NOT NULL
      UNION ALL
      SELECT version_id, node_id, from_bucket, at, -1 FROM taken WHERE from_bucket IS NOT NULL
      UNION ALL
      SELECT version_id, node_id, to_bucket, at, n FROM tallied WHERE to_bucket IS NOT NULL
      UNION ALL
      SELECT version_id, node_id, from_bucket, at, -n FROM tallied WHERE from_bucket IS NOT NULL
      UNION ALL
      SELECT p.version_id, p.node_id, 'path:' || p.path || ':' || o.outcome, o.at, 1 FROM outcomes o JOIN passed p ON p.run_id = o.run_id
    ), summed AS (
      SELECT version_id, node_id, bucket, (at AT TIME ZONE 'UTC')::date AS day, sum(n)::bigint AS n FROM moves GROUP BY 1, 2, 3, 4
    ), added AS (
      INSERT INTO journey_counts (org_id, automation_id, version_id, node_id, bucket, day, n)
      SELECT v.org_id, v.automation_id, s.version_id, s.node_id, s.bucket, s.day, s.n
      FROM summed s JOIN automation_versions v ON v.id = s.version_id
      ORDER BY s.version_id, s.node_id, s.bucket, s.day
      ON CONFLICT (version_id, node_id, bucket, day) DO UPDATE SET n = journey_counts.n + excluded.n
      RETURNING 1
    )
    SELECT (SELECT count(*)::int FROM taken) + (SELECT count(*)::int FROM tallied) AS folded,
           (SELECT count(*) FROM tallied) >= ${tallyShare} OR (SELECT count(*) FROM taken) + (SELECT count(*) FROM tallied) >= ${batch} AS full,
           (SELECT (extract(epoch FROM now() - min(at)) * 1000)::float8 FROM (SELECT at FROM taken UNION ALL SELECT at FROM tallied) a) AS "oldestAgeMs",
           (SELECT count(*)::int FROM added) AS added`;
  const r = rows[0];
  return { folded: r?.folded ?? 0, full: r?.full ?? false, oldestAgeMs: r?.oldestAgeMs ?? null };
}

/** Rows waiting to be folded (a tally row is many changes), counted up to `upTo` (a larger backlog is said as `upTo`). */
export async function countChangesPending(tx: Tx, upTo: number): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM ((SELECT 1 FROM count_changes LIMIT ${upTo}) UNION ALL (SELECT 1 FROM count_tallies LIMIT ${upTo})) c`;
  return Math.min(rows[0]?.n ?? 0, upTo);
}
