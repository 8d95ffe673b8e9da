/**
 * The journey counts as the database itself says them, by scanning steps, runs and the timeline: what journeyCounts
 * must equal. `q` runs one query; pass one bound to a REPEATABLE READ transaction to read in the counts' snapshot.
 */
// biome-ignore lint/suspicious/noExplicitAny: rows are read by the queries' own column names
export type Query = (sql: string, params: unknown[]) => Promise<any[]>;

export interface Scan {
  nodes: Record<string, { now: number; held: number; passed: number; failed: number; cancelled: number; converted: number }>;
  runs: { started: number; completed: number; failed: number; cancelled: number; converted: number; now: number };
}

/**
 * Steps by node and bucket, runs by status: of the runs now on `versionIds`, test runs excluded. A cancelled step of a
 * converted run is 'converted' (its run met the goal there), told from the run's status, not from goal_met as the
 * trigger does.
 */
export async function scanCounts(q: Query, versionIds: string[]): Promise<Scan> {
  const steps = await q(
    `SELECT s.node_id, CASE WHEN s.status = 'cancelled' AND r.status = 'converted' THEN 'converted' ELSE holdfast_count_bucket(s.status) END AS bucket,
            count(*)::int AS n
       FROM steps s JOIN runs r ON r.id = s.run_id
      WHERE r.version_id = ANY($1::text[]) AND NOT r.test
      GROUP BY 1, 2`,
    [versionIds],
  );
  const nodes: Scan["nodes"] = {};
  for (const r of steps) {
    const node = (nodes[r.node_id] ??= { now: 0, held: 0, passed: 0, failed: 0, cancelled: 0, converted: 0 });
    node[r.bucket as keyof typeof node] += r.n;
  }
  const runs = await q(`SELECT status, count(*)::int AS n FROM runs WHERE version_id = ANY($1::text[]) AND NOT test GROUP BY 1`, [versionIds]);
  const by = Object.fromEntries(runs.map((r) => [r.status, r.n])) as Record<string, number>;
  const started = runs.reduce((s: number, r: { n: number }) => s + r.n, 0);
  return {
    nodes,
    runs: { started, completed: by.completed ?? 0, failed: by.failed ?? 0, cancelled: by.cancelled ?? 0, converted: by.converted ?? 0, now: by.running ?? 0 },
  };
}

/** One timeline or step fact that says an edge was taken, for a test graph whose edges each leave a trace. */
export interface EdgeTrace {
  from: string;
  label: string | null;
  to: string;
  /** SQL returning run ids, one row per time the edge was taken (`$1`: the version ids). */
  sql: string;
}

/** Each edge's count from its trace, over non-test runs: [from|label|to, n] with n > 0 only. */
export async function scanEdges(q: Query, versionIds: string[], traces: EdgeTrace[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const e of traces) {
    const rows = await q(`SELECT count(*)::int AS n FROM (${e.sql}) x JOIN runs r ON r.id = x.run_id WHERE NOT r.test AND r.version_id = ANY($1::text[])`, [
      versionIds,
    ]);
    const n = rows[0]?.n ?? 0;
    if (n > 0) out[`${e.from}|${e.label ?? ""}|${e.to}`] = n;
  }
  return out;
}
