import type pg from "pg";

export interface OrgLateness {
  slug: string;
  timers: number;
  fired: number;
  p50: number;
  p99: number;
  max: number;
}

export interface SpikeFigures {
  timers: number;
  fired: number;
  /** timer.fired timeline rows beyond one per fired timer. */
  extraFiredEvents: number;
  runsCompleted: number;
  /** Timers fired per second: the busiest second, and all of them over first due -> last fired. */
  peakPerSecond: number;
  meanPerSecond: number;
  /** First due instant to the last firing, and to the last run completed. */
  firingSpanSeconds: number;
  completionSpanSeconds: number;
  overall: { p50: number; p99: number; max: number };
  orgs: OrgLateness[];
  /** Who fired them: engine (the delayed job's fast path) or sweeper (the due sweep). */
  firedBy: Record<string, number>;
}

/** Read back from the timers and runs rows (lateness_ms = fired_at - due_at, both by the database clock). */
export async function readSpike(sql: pg.Client): Promise<SpikeFigures> {
  const orgs = await sql.query(
    `SELECT o.slug, count(*)::int AS timers, count(t.fired_at)::int AS fired,
            COALESCE(percentile_disc(0.5) WITHIN GROUP (ORDER BY t.lateness_ms), 'NaN')::float8 AS p50,
            COALESCE(percentile_disc(0.99) WITHIN GROUP (ORDER BY t.lateness_ms), 'NaN')::float8 AS p99,
            COALESCE(max(t.lateness_ms), 'NaN')::float8 AS max
     FROM timers t JOIN organisations o ON o.id = t.org_id GROUP BY o.slug ORDER BY o.slug`,
  );
  const [all] = (
    await sql.query(
      `SELECT count(*)::int AS timers, count(fired_at)::int AS fired,
              COALESCE(percentile_disc(0.5) WITHIN GROUP (ORDER BY lateness_ms), 'NaN')::float8 AS p50,
              COALESCE(percentile_disc(0.99) WITHIN GROUP (ORDER BY lateness_ms), 'NaN')::float8 AS p99,
              COALESCE(max(lateness_ms), 'NaN')::float8 AS max,
              COALESCE(EXTRACT(EPOCH FROM max(fired_at) - min(due_at)), 'NaN')::float8 AS span,
              (SELECT count(*)::int FROM run_events WHERE type = 'timer.fired') AS events,
              (SELECT count(*)::int FROM runs WHERE status = 'completed') AS completed,
              COALESCE((SELECT EXTRACT(EPOCH FROM max(finished_at)) FROM runs) - EXTRACT(EPOCH FROM min(due_at)), 'NaN')::float8 AS done_span
       FROM timers`,
    )
  ).rows;
  const [peak] = (
    await sql.query(`SELECT COALESCE(max(n), 0)::int AS n FROM (SELECT count(*) AS n FROM timers WHERE fired_at IS NOT NULL GROUP BY date_trunc('second', fired_at)) x`)
  ).rows;
  const by = await sql.query(`SELECT split_part(fired_by, '@', 1) AS who, count(*)::int AS n FROM timers WHERE fired_at IS NOT NULL GROUP BY 1 ORDER BY 1`);
  return {
    timers: all.timers,
    fired: all.fired,
    extraFiredEvents: Math.max(0, all.events - all.fired),
    runsCompleted: all.completed,
    peakPerSecond: peak.n,
    meanPerSecond: all.fired / all.span,
    firingSpanSeconds: all.span,
    completionSpanSeconds: all.done_span,
    overall: { p50: all.p50, p99: all.p99, max: all.max },
    orgs: orgs.rows as OrgLateness[],
    firedBy: Object.fromEntries(by.rows.map((r) => [r.who, r.n])),
  };
}

/** Jain's fairness index: 1 when every value is equal, 1/n when one organisation has it all. */
export function jain(values: number[]): number {
  const sum = values.reduce((a, b) => a + b, 0);
  const squares = values.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (values.length * squares);
}
