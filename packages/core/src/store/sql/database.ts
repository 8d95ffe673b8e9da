import type { Db, Tx } from "@holdfast/db";

/**
 * Statements about the database itself, not a table: its clock and whether it answers. Every process decides times
 * by the database's now() (worker clocks drift).
 */
export async function databaseNow(db: Db | Tx): Promise<Date> {
  const rows = await db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
  return (rows[0] as { now: Date }).now;
}

/** Resolves when the database answers a trivial statement (readiness and the outage watch). */
export async function databasePing(db: Db | Tx): Promise<void> {
  await db.$queryRaw`SELECT 1`;
}

/** The database clock in epoch milliseconds, with its sub-millisecond fraction. */
export async function databaseNowMs(db: Db | Tx): Promise<number> {
  const rows = await db.$queryRaw<{ nowMs: number }[]>`SELECT (EXTRACT(EPOCH FROM now()) * 1000)::float8 AS "nowMs"`;
  return (rows[0] as { nowMs: number }).nowMs;
}

/** Takes a transaction-scoped advisory lock (released at commit): callers with the same key take turns. */
export function databaseAdvisoryXactLock(tx: Tx, key: number): Promise<number> {
  return tx.$executeRaw`SELECT pg_advisory_xact_lock(${key})`;
}

/** The server's connection budget and its use (every database and role): said when a process waited for a slot. */
export async function databaseConnectionSlots(db: Db): Promise<{ maxConnections: number; inUse: number; reservedForSuperusers: number }> {
  const rows = await db.$queryRaw<{ maxConnections: number; inUse: number; reservedForSuperusers: number }[]>`
    SELECT current_setting('max_connections')::int AS "maxConnections",
           (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS "inUse",
           current_setting('superuser_reserved_connections')::int AS "reservedForSuperusers"`;
  return rows[0] as { maxConnections: number; inUse: number; reservedForSuperusers: number };
}

/** How long until an instant (a timestamp as the database writes one) by the database clock, in ms; 0 once it passed. */
export async function databaseMsUntil(db: Db | Tx, at: string): Promise<number> {
  const rows = await db.$queryRaw<{ ms: number }[]>`SELECT GREATEST(0, EXTRACT(EPOCH FROM ${at}::timestamptz - now()) * 1000)::float8 AS ms`;
  return (rows[0] as { ms: number }).ms;
}
