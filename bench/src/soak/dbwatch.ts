import pg from "pg";

/**
 * Every 10 s, what the database sees of the processes (by application name): connections, transactions open
 * longer than 5 s, and sessions waiting on a lock with who blocks them. A line for the timeline, so a stall can be
 * told from a starved machine afterwards.
 */
export function watchDatabase(adminUrl: string, t0: number, events: string[]): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((r) => setTimeout(r, 10_000));
      if (stopped) break;
      const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000, statement_timeout: 5_000 });
      // A planned PostgreSQL restart ends this connection: during the query the query fails (caught below); between
      // the query and end() it arrives as the client's 'error' event, which unheard would end the soak itself.
      c.on("error", () => {});
      try {
        await c.connect();
        const { rows } = await c.query<{ app: string; n: number; long_tx: number; oldest: number | null; waiting: number; blockers: string | null }>(
          `SELECT a.application_name AS app, count(*)::int AS n,
                  count(*) FILTER (WHERE a.xact_start < now() - interval '5 seconds')::int AS long_tx,
                  round(max(EXTRACT(EPOCH FROM now() - a.xact_start)))::int AS oldest,
                  count(*) FILTER (WHERE a.wait_event_type = 'Lock')::int AS waiting,
                  string_agg(DISTINCT b.application_name || ':' || b.state, ' ') FILTER (WHERE b.pid IS NOT NULL) AS blockers
           FROM pg_stat_activity a
           LEFT JOIN LATERAL unnest(pg_blocking_pids(a.pid)) AS bp(pid) ON true
           LEFT JOIN pg_stat_activity b ON b.pid = bp.pid
           WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
           GROUP BY a.application_name ORDER BY 1`,
        );
        const parts = rows
          .filter((r) => r.long_tx > 0 || r.waiting > 0 || r.app.includes("web"))
          .map((r) => `${r.app.replace(/^holdfast-/, "")} ${r.n}${r.long_tx ? ` (${r.long_tx} in a transaction > 5 s, oldest ${r.oldest} s)` : ""}${r.waiting ? ` (${r.waiting} waiting for a lock held by ${r.blockers})` : ""}`);
        events.push(`${((Date.now() - t0) / 1000).toFixed(1)} s db: ${parts.join(", ") || "-"}`);
      } catch (error) {
        events.push(`${((Date.now() - t0) / 1000).toFixed(1)} s db: not answering (${(error as Error).message})`);
      } finally {
        await c.end().catch(() => undefined);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
