import pg from "pg";
import { adminUrl, urlFor } from "../pg";
import { cpuSeconds, loadAverage } from "./proc";
import { type WalDetail, walDetail } from "./wal-detail";

/**
 * What one scenario cost, measured so that other work on a shared machine stays out of it:
 * - commits: `pg_stat_database.xact_commit` of the scenario's own database (every transaction, read-only ones too);
 *   write commits: the commit records in the WAL of that database's transactions (those that wrote: each one a
 *   commit PostgreSQL must flush before it answers);
 * - WAL: the records of that database's transactions (pg_walinspect over the window, a temporary replication slot
 *   keeping the segments until they are read), beside the server-wide `pg_current_wal_lsn` delta;
 * - CPU: each Node process by pid and each PostgreSQL backend of that database by pid (/proc/<pid>/stat), the
 *   backends grouped by application_name. PostgreSQL's shared background processes (WAL writer, checkpointer) are
 *   not counted.
 * The meter works from its own database, so its queries count in none of the measured ones.
 */
export interface NodeProc {
  name: string;
  pid(): number | undefined;
}

export interface Figures {
  seconds: number;
  commits: number;
  /** Commit records of the measured database's transactions in the WAL (transactions that wrote); NaN without pg_walinspect. */
  writeCommits: number;
  /** WAL bytes of the measured database's transactions; NaN without pg_walinspect. */
  walBytes: number;
  /** pg_current_wal_lsn delta: every database on the server. */
  walBytesServer: number;
  /** walBytes by record type and by relation (wal-detail.ts), read after the window; unset without pg_walinspect. */
  walDetail?: WalDetail;
  /** CPU seconds per Node process. */
  nodeCpu: Record<string, number>;
  /** CPU seconds per group of backends (application_name, else backend type). */
  pgCpu: Record<string, number>;
  load: { start: number; end: number };
}

export interface Window {
  /** The work is done: CPU and WAL stop counting here (before the processes are stopped). */
  done(): Promise<void>;
  /** After the processes were stopped (their backends flushed their statistics on exit): the figures. */
  end(): Promise<Figures>;
}

// One per bench process: two benches at once (the CI test beside a full run) must not share or drop each other's.
const meterDb = `holdfast_bench_meter_${process.pid}`;
/** The one ANALYZE of each window (autovacuum's stand-in, see begin()): this far into it, from this application_name. */
const analyzeAfterMs = 2_000;
const analyzeApp = "holdfast-bench-analyze";

export class Meter {
  private constructor(
    private readonly client: pg.Client,
    readonly walinspect: boolean,
  ) {}

  private chain: Promise<unknown> = Promise.resolve();

  /** One query at a time on the meter's connection (the sampler runs beside the rest). */
  private query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const next = this.chain.then(() => this.client.query(text, values));
    this.chain = next.catch(() => {});
    return next;
  }

  static async open(): Promise<Meter> {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${meterDb} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${meterDb}`);
    await admin.end();
    const client = new pg.Client({ connectionString: urlFor(meterDb), application_name: "holdfast-bench-meter" });
    await client.connect();
    let walinspect = true;
    try {
      await client.query("CREATE EXTENSION pg_walinspect");
    } catch (error) {
      walinspect = false;
      console.warn(`pg_walinspect unavailable (${(error as Error).message}): WAL is the server-wide figure only`);
    }
    return new Meter(client, walinspect);
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${meterDb} WITH (FORCE)`);
    await admin.end();
  }

  /**
   * `wal: false`: the server-wide LSN delta only (a long window's WAL is too much to read back record by record).
   * `analyze: false`: no stand-in ANALYZE in this window, for a database whose tables were analyzed after they were
   * loaded (cost as data grows): there it would read a sample of every table of tens of GB beside the row, which no
   * server does at that moment (autovacuum analyzes a table again once a tenth of it changed).
   */
  async begin(database: string, procs: NodeProc[], options: { wal?: boolean; analyze?: boolean } = {}): Promise<Window> {
    const walinspect = this.walinspect && options.wal !== false;
    const c = { query: (text: string, values?: unknown[]) => this.query(text, values) };
    const slot = `hf_bench_${process.pid}_${Date.now()}`;
    if (walinspect) await c.query("SELECT pg_create_physical_replication_slot($1, true, true)", [slot]);
    const oid = Number((await c.query("SELECT oid::int8 AS oid FROM pg_database WHERE datname = $1", [database])).rows[0]?.oid);
    const commits = async () => Number((await c.query("SELECT xact_commit::int8 AS n FROM pg_stat_database WHERE datname = $1", [database])).rows[0]?.n ?? 0);
    const commitsBefore = await commits();
    const lsnStart: string = (await c.query("SELECT pg_current_wal_insert_lsn()::text AS l")).rows[0].l;
    const nodeBefore = Object.fromEntries(procs.map((p) => [p.name, cpuSeconds(p.pid())]));
    const loadStart = loadAverage();
    const started = performance.now();

    // Backends by pid: the CPU each had when first seen (0 for one forked inside the window) and at the last sample.
    const backends = new Map<number, { group: string; base: number; last: number }>();
    let first = true;
    const sample = async () => {
      const { rows } = await c.query(
        "SELECT pid, COALESCE(NULLIF(application_name, ''), backend_type) AS grp FROM pg_stat_activity WHERE datname = $1",
        [database],
      );
      for (const r of rows as { pid: number; grp: string }[]) {
        const now = cpuSeconds(r.pid);
        const seen = backends.get(r.pid);
        if (seen) seen.last = Math.max(seen.last, now);
        else backends.set(r.pid, { group: r.grp, base: first ? now : 0, last: now });
      }
      first = false;
    };
    await sample();
    let sampling = Promise.resolve();
    const timer = setInterval(() => {
      sampling = sampling.then(sample).catch(() => {});
    }, 200);
    // A stand-in for autovacuum's analyze. A default server analyzes a table once enough of its rows changed, looking
    // at each database every autovacuum_naptime (a minute); autovacuum is off on the bench machines and a row lasts
    // seconds, so a plan cached while the row's fresh tables were empty (every row of every system starts on a fresh
    // database) would stay for the whole row, chosen between indexes that looked equally good on no rows. Once a row,
    // at the same point for every system.
    let analyzing: Promise<void> | undefined;
    const analyzeTimer = setTimeout(() => {
      if (options.analyze === false) return;
      analyzing = (async () => {
        const a = new pg.Client({ connectionString: urlFor(database), application_name: analyzeApp });
        a.on("error", () => {}); // a lost connection fails the ANALYZE (caught); unheard, the event would end the bench
        try {
          await a.connect();
          await a.query("ANALYZE");
        } catch {
          // The database went with its row: nothing to analyze.
        } finally {
          await a.end().catch(() => {});
        }
      })();
    }, analyzeAfterMs);

    let doneAt: { seconds: number; lsn: string; nodeCpu: Record<string, number>; load: number } | undefined;
    return {
      async done() {
        clearInterval(timer);
        clearTimeout(analyzeTimer); // a row shorter than that: no analyze
        await analyzing;
        await sampling;
        await sample();
        const lsn: string = (await c.query("SELECT pg_current_wal_insert_lsn()::text AS l")).rows[0].l;
        const nodeCpu = Object.fromEntries(procs.map((p) => [p.name, cpuSeconds(p.pid()) - (nodeBefore[p.name] ?? 0)]));
        doneAt = { seconds: (performance.now() - started) / 1000, lsn, nodeCpu, load: loadAverage() };
      },
      end: async () => {
        if (!doneAt) throw new Error("Window.end() before done()");
        // Statistics of backends that are still connected can lag up to a second behind (10 s when idle): the
        // caller stops its processes first, and this waits for the rest.
        await new Promise((r) => setTimeout(r, 1200));
        const commitsAfter = await commits();
        const pgCpu: Record<string, number> = {};
        for (const b of backends.values()) pgCpu[b.group] = (pgCpu[b.group] ?? 0) + (b.last - b.base);
        delete pgCpu[analyzeApp]; // the bench's stand-in for autovacuum, not the system's work
        let walBytes = Number.NaN;
        let writeCommits = Number.NaN;
        let detail: WalDetail | undefined;
        const walBytesServer = Number((await c.query("SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8 AS n", [doneAt.lsn, lsnStart])).rows[0].n);
        if (walinspect) {
          // The window's end is the insert position taken at done(): records written after the last commit before it
          // (a checkpoint's, a standby snapshot's) may not be flushed yet, and pg_walinspect reads flushed WAL only
          // ("cannot accept future end LSN", seen once in a graphile-worker row). A transaction of the meter's own (an
          // xid, so a commit record, flushed before it answers under synchronous_commit = on) moves the flush past the
          // window's end; under another setting the WAL writer does within a few of its rounds, which this waits for.
          await c.query("SELECT pg_current_xact_id()");
          for (let i = 0; i < 50; i++) {
            const { rows } = await c.query("SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok", [doneAt.lsn]);
            if (rows[0]?.ok) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          // A record is the database's when a block it touches is in it (rel <tablespace>/<database oid>/...), or
          // when it belongs to a transaction that touched the database (its commit record).
          const { rows } = await c.query(
            // A transaction that wrote only inside subtransactions (a batched settle's items) has its records under
            // the subtransactions' xids; its commit record names them ("subxacts: ...").
            `WITH r AS (
               SELECT xid, record_length, block_ref ~ $3 AS ours,
                      CASE WHEN resource_manager = 'Transaction' AND record_type = 'COMMIT'
                           THEN string_to_array(COALESCE(substring(description from 'subxacts: ([0-9 ]+)'), ''), ' ') END AS subxacts
               FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
             ), tx AS (SELECT DISTINCT xid FROM r WHERE ours AND xid <> '0'),
             c AS (
               SELECT r.* FROM r WHERE subxacts IS NOT NULL
                 AND (xid IN (SELECT xid FROM tx) OR EXISTS (SELECT 1 FROM unnest(subxacts) s WHERE s <> '' AND s::xid IN (SELECT xid FROM tx)))
             )
             SELECT (COALESCE((SELECT sum(record_length) FROM r WHERE (ours OR xid IN (SELECT xid FROM tx)) AND subxacts IS NULL), 0)
                     + COALESCE((SELECT sum(record_length) FROM c), 0))::float8 AS n,
                    (SELECT count(*) FROM c)::float8 AS commits`,
            [lsnStart, doneAt.lsn, `rel [0-9]+/${oid}/`],
          );
          walBytes = Number(rows[0].n);
          writeCommits = Number(rows[0].commits);
          detail = await walDetail(c, urlFor(database), oid, lsnStart, doneAt.lsn).catch((error) => {
            console.warn(`WAL by relation not read: ${(error as Error).message}`);
            return undefined;
          });
          await c.query("SELECT pg_drop_replication_slot($1)", [slot]).catch(() => {});
        }
        return {
          seconds: doneAt.seconds,
          commits: commitsAfter - commitsBefore,
          writeCommits,
          walBytes,
          walBytesServer,
          ...(detail ? { walDetail: detail } : {}),
          nodeCpu: doneAt.nodeCpu,
          pgCpu,
          load: { start: loadStart, end: doneAt.load },
        };
      },
    };
  }
}
