import type { Db, Tx } from "@holdfast/db";
import { databaseNow } from "./database";
import type { RunRow } from "./runs";

/**
 * The test_runs table: one row per test run (runs.test), with the script its simulated effects answer from, where
 * "Send to me" sends, and its virtual clock (the run's now is now() + clock_offset_ms). Written at the test run's
 * start in its transaction; the clock moves only forward.
 */
export interface TestRunRow {
  runId: string;
  startedBy: string;
  script: unknown;
  sendTo: string | null;
  clockOffsetMs: number;
  virtualNow: Date;
}

export async function testRunsInsert(
  tx: Tx,
  r: {
    orgId: string;
    runId: string;
    startedBy: string;
    script: unknown;
    sendTo: string | null;
    contact: { email: string; timeZone: string | null; attributes?: Record<string, unknown> } | null;
    /** Where the run's clock starts (never before now): "as if it were Friday 26 March at 18:00". */
    clockStartsAt: Date | null;
  },
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO test_runs (run_id, org_id, started_by, script, send_to, contact, clock_offset_ms)
    VALUES (${r.runId}, ${r.orgId}, ${r.startedBy}, ${JSON.stringify(r.script)}::jsonb, ${r.sendTo}, ${r.contact === null ? null : JSON.stringify(r.contact)}::jsonb,
            GREATEST(0, COALESCE(floor(EXTRACT(EPOCH FROM (${r.clockStartsAt}::timestamptz - now())) * 1000)::bigint, 0)))`;
}

export async function testRunsGet(db: Db | Tx, orgId: string, runId: string): Promise<TestRunRow | null> {
  const rows = await db.$queryRaw<TestRunRow[]>`
    SELECT run_id AS "runId", started_by AS "startedBy", script, send_to AS "sendTo", clock_offset_ms::float8 AS "clockOffsetMs",
           now() + make_interval(secs => clock_offset_ms / 1000.0) AS "virtualNow"
    FROM test_runs WHERE org_id = ${orgId} AND run_id = ${runId}`;
  return rows[0] ?? null;
}

/** The test run's now: the database clock plus its offset (the database clock itself for a run with no row). */
export async function testRunsVirtualNow(tx: Db | Tx, orgId: string, runId: string): Promise<Date> {
  const rows = await tx.$queryRaw<{ now: Date }[]>`
    SELECT now() + make_interval(secs => COALESCE((SELECT clock_offset_ms FROM test_runs WHERE org_id = ${orgId} AND run_id = ${runId}), 0) / 1000.0) AS now`;
  return (rows[0] as { now: Date }).now;
}

/** Moves the virtual clock forward to `instant` (never back): the run's later waits count from there. */
export async function testRunsAdvanceClockTo(tx: Tx, orgId: string, runId: string, instant: Date): Promise<void> {
  await tx.$executeRaw`
    UPDATE test_runs SET clock_offset_ms = GREATEST(clock_offset_ms, floor(EXTRACT(EPOCH FROM (${instant}::timestamptz - now())) * 1000)::bigint),
                         updated_at = now()
    WHERE org_id = ${orgId} AND run_id = ${runId}`;
}

export async function testRunsSetScript(db: Db | Tx, orgId: string, runId: string, script: unknown): Promise<number> {
  return db.$executeRaw`UPDATE test_runs SET script = ${JSON.stringify(script)}::jsonb, updated_at = now() WHERE org_id = ${orgId} AND run_id = ${runId}`;
}

/**
 * The instant a run's new waits count from: the database clock, or a test run's virtual clock (the database clock
 * plus the time its skipped waits jumped over), so a test run's timeline reads as the journey would unfold.
 */
export function runNow(tx: Tx, run: Pick<RunRow, "id" | "orgId" | "test">): Promise<Date> {
  return run.test ? testRunsVirtualNow(tx, run.orgId, run.id) : databaseNow(tx);
}
