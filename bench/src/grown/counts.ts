import { readFileSync } from "node:fs";
import { join } from "node:path";
import { journeyCounts } from "@holdfast/core/run";
import { createDb, functionsDir } from "@holdfast/db";
import type pg from "pg";
import { fmt } from "../report";
import { quantiles } from "../result";
import type { CloneSpec } from "./clone";

/**
 * Journey counts in the grown bench (issue 43). The clones are written without triggers (clone.ts), so they write no
 * count_changes: their counts are added to journey_counts as the fold would have left them, from the template run's
 * changes (rebuilt from its steps, its run row and its version's edges, as the triggers and the walk wrote them) moved
 * back by each clone's age. Then the canvas's read is timed, and the settle with the counts against without them.
 */

/** The template run's count changes, rebuilt from its rows (the sweeper may have folded the real ones already). */
export async function setTemplateChangesAside(sql: pg.Client, templateRunId: string): Promise<number> {
  const r = await sql.query(
    `CREATE TEMP TABLE grown_template_changes AS
     WITH run AS (SELECT * FROM grown_template_runs WHERE id = $1),
     edges AS (
       SELECT e->>'from' AS from_id, e->>'to' AS to_id, COALESCE(e->>'label', '') AS label
       FROM run JOIN automation_versions v ON v.id = run.version_id CROSS JOIN LATERAL jsonb_array_elements(v.graph->'edges') e
     )
     SELECT run.org_id, run.version_id, '' AS node_id, NULL::text AS from_bucket, 'started' AS to_bucket, run.created_at AS at FROM run
     UNION ALL SELECT run.org_id, run.version_id, '', NULL, run.status, run.finished_at FROM run
     UNION ALL SELECT s.org_id, run.version_id, s.node_id, NULL, 'now', s.created_at FROM grown_template_steps s, run
     UNION ALL SELECT s.org_id, run.version_id, s.node_id, 'now', 'passed', s.settled_at FROM grown_template_steps s, run
     UNION ALL SELECT run.org_id, run.version_id, e.from_id, NULL, 'edge:' || e.label || ':' || e.to_id,
                      COALESCE((SELECT min(s.created_at) FROM grown_template_steps s WHERE s.node_id = e.to_id), run.finished_at)
               FROM edges e, run`,
    [templateRunId],
  );
  return r.rowCount ?? 0;
}

/** Clones from..to's counts added to journey_counts, summed per version, node, bucket and UTC day as the fold sums them. */
export async function foldClones(sql: pg.Client, s: CloneSpec): Promise<number> {
  const r = await sql.query(
    `INSERT INTO journey_counts (org_id, automation_id, version_id, node_id, bucket, day, n)
     SELECT c.org_id, v.automation_id, c.version_id, c.node_id, b.bucket, ((c.at - g.age) AT TIME ZONE 'UTC')::date, sum(b.n)
     FROM grown_template_changes c JOIN automation_versions v ON v.id = c.version_id
     CROSS JOIN (SELECT make_interval(secs => $1::float8 + ($2::int - n) * $3::float8) AS age FROM generate_series($4::int, $5::int) n) g
     CROSS JOIN LATERAL (VALUES (c.to_bucket, 1), (c.from_bucket, -1)) AS b(bucket, n)
     WHERE b.bucket IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5, 6
     ORDER BY 3, 4, 5, 6
     ON CONFLICT (version_id, node_id, bucket, day) DO UPDATE SET n = journey_counts.n + excluded.n`,
    [s.baseSeconds, s.largest, s.spacingSeconds, s.from, s.to],
  );
  return r.rowCount ?? 0;
}

export const readTargetMs = 50;

/** The canvas's read of the template's automation, `times` times one after another: p50 and p99 (ms) per window. */
export async function timeCountsRead(url: string, sql: pg.Client, templateRunId: string, times: number): Promise<{ window: string; p50: number; p99: number; pending: number; started: number }[]> {
  const [run] = (await sql.query<{ org_id: string; automation_id: string; version_id: string }>("SELECT org_id, automation_id, version_id FROM grown_template_runs WHERE id = $1", [templateRunId])).rows;
  if (!run) throw new Error("no template run");
  const db = createDb(url, { poolSize: 2, applicationName: "holdfast-bench-counts" });
  const out = [];
  try {
    for (const window of ["30d", "all"] as const) {
      const q = { orgId: run.org_id, automationId: run.automation_id, versionId: run.version_id, window };
      let last = await journeyCounts(db, q);
      const ms: number[] = [];
      for (let i = 0; i < times; i++) {
        const t0 = performance.now();
        last = await journeyCounts(db, q);
        ms.push(performance.now() - t0);
      }
      const qs = quantiles(ms) ?? { p50: Number.NaN, p99: Number.NaN };
      out.push({ window, ...qs, pending: last.pendingChanges, started: last.runs.started });
    }
  } finally {
    await db.$disconnect();
  }
  return out;
}

export function countsReadLines(size: number, reads: Awaited<ReturnType<typeof timeCountsRead>>): string[] {
  return reads.map(
    (r) =>
      `  journey counts read (${r.window}, ${fmt(r.started)} runs counted, ${fmt(r.pending)} changes not folded) with ${fmt(size)} finished runs present: ` +
      `p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms (target p99 <= ${readTargetMs} ms: ${r.p99 <= readTargetMs ? "met" : "not met"})`,
  );
}

const countTriggers = [
  ["steps", "steps_count_insert"],
  ["steps", "steps_count_status"],
  ["runs", "runs_count_insert"],
  ["runs", "runs_count_status"],
] as const;

/** The set writers that count their own steps' changes (20261215100000_count_by_statement), in their `moves` CTEs. */
const countingSets = ["step_settle_set.sql", "timers_fire_walk.sql"] as const;

/**
 * The counts off, for the "without" rows: the triggers that write step and run changes disabled,
 * holdfast_rows_insert without its edges' INSERT (the body before issue 43), and the set writers' own step changes
 * not written. `on` puts the live bodies back.
 */
export async function setCounts(sql: pg.Client, on: boolean): Promise<void> {
  const live = readFileSync(join(functionsDir, "rows_insert.sql"), "utf8");
  const edges = /\n {2}IF jsonb_array_length\(COALESCE\(p_rows->'edges'[\s\S]*?\n {2}END IF;/;
  if (!edges.test(live)) throw new Error("rows_insert.sql: the edges' INSERT was not found");
  for (const [table, trigger] of countTriggers) await sql.query(`ALTER TABLE ${table} ${on ? "ENABLE" : "DISABLE"} TRIGGER ${trigger}`);
  await sql.query(on ? live : live.replace(edges, ""));
  for (const file of countingSets) {
    const body = readFileSync(join(functionsDir, file), "utf8");
    const writes = /FROM moves m WHERE (NOT )?(summed|p_tally)\b/g;
    if ((body.match(writes) ?? []).length !== 2) throw new Error(`${file}: the two writes of its moves were not found`);
    await sql.query(on ? body : body.replace(writes, "FROM moves m WHERE false"));
  }
}
