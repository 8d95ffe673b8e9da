import { readFileSync, readdirSync } from "node:fs";
import { ensureDatabase, migrate } from "@holdfast/db";
import pg from "pg";

export const adminUrl = process.env.BENCH_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export function urlFor(name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh, migrated database (dropped first if it exists). */
export async function freshDatabase(name: string, migrated = true): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
  const url = urlFor(name);
  await ensureDatabase(url);
  if (migrated) await migrate(url);
  return url;
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

export interface DbCounters {
  commits: number;
  walBytes: number;
  /** CPU seconds of every PostgreSQL process (postmaster + its children, live and exited). */
  pgCpu: number;
}

const ticks = 100; // USER_HZ on Linux

function procCpu(pid: number, children: boolean): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // fields[11..14] = utime, stime, cutime, cstime (1-based 14..17 in proc(5), shifted by the split)
    const own = Number(fields[11]) + Number(fields[12]);
    return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) / ticks;
  } catch {
    return 0;
  }
}

export function pidCpu(pid: number | undefined): number {
  return pid ? procCpu(pid, true) : 0;
}

function postgresCpu(): number {
  let total = 0;
  let postmaster = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let comm = "";
    try {
      comm = readFileSync(`/proc/${entry}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    if (comm !== "postgres") continue;
    const ppid = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
    let parentComm = "";
    try {
      parentComm = readFileSync(`/proc/${ppid}/comm`, "utf8").trim();
    } catch {}
    if (parentComm !== "postgres") {
      postmaster = Number(entry);
      total += procCpu(postmaster, true); // includes children that have exited
    } else total += procCpu(Number(entry), false);
  }
  return total;
}

export async function counters(url: string, dbName: string): Promise<DbCounters> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const commits = await c.query("SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = $1", [dbName]);
  const wal = await c.query("SELECT wal_bytes::float8 AS n FROM pg_stat_wal");
  await c.end();
  return { commits: commits.rows[0].n, walBytes: wal.rows[0].n, pgCpu: postgresCpu() };
}

export function diff(a: DbCounters, b: DbCounters): DbCounters {
  return { commits: b.commits - a.commits, walBytes: b.walBytes - a.walBytes, pgCpu: b.pgCpu - a.pgCpu };
}

export async function setting(url: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const r = await c.query(`SELECT current_setting($1) AS v`, [name]);
  await c.end();
  return r.rows[0].v;
}
