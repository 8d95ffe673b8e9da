import { Prisma, type Db, type Tx } from "@holdfast/db";

/**
 * Whole runs carried from the archive's latest state into a database restored to an earlier point (run/restore/):
 * runs that started after the point. Their webhooks were answered 2xx, so no sender delivers them again; without the
 * carry they would be lost. The run's rows travel table by table as JSON; columns filled by a sequence are left to
 * the restored database's own sequence (its numbering is behind the latest state's).
 */

/** The tables a run's rows live in, parents first (runs, then steps, which the others reference). */
export const runTables = ["runs", "steps", "approvals", "timers", "effects", "email_messages", "contact_sends", "signals", "test_runs", "run_split_paths", "run_events", "outbox", "trigger_deliveries"] as const;
export type RunTable = (typeof runTables)[number];

/** Runs the latest state started at or after `since`. */
export async function runsStartedSince(db: Db | Tx, since: Date): Promise<{ id: string; orgId: string }[]> {
  return db.$queryRaw<{ id: string; orgId: string }[]>`SELECT id, org_id AS "orgId" FROM runs WHERE created_at >= ${since} ORDER BY created_at`;
}

/** Every row of `table` belonging to these runs (read on the latest state). */
export async function runRowsOf(db: Db | Tx, table: RunTable, runIds: string[]): Promise<Record<string, unknown>[]> {
  const column = table === "runs" ? "id" : "run_id";
  const rows = await db.$queryRawUnsafe<{ row: Record<string, unknown> }[]>(`SELECT to_jsonb(x) AS row FROM ${table} x WHERE x.${column} = ANY($1::text[])`, runIds);
  return rows.map((r) => r.row);
}

/** The columns of `table` that are not filled by a sequence or an identity (read on the restored database). */
export async function carriedColumns(db: Db | Tx, table: RunTable): Promise<string[]> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    SELECT column_name AS name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table}
      AND is_identity = 'NO' AND COALESCE(column_default, '') NOT LIKE 'nextval(%' AND is_generated = 'NEVER'
    ORDER BY ordinal_position`;
  return rows.map((r) => r.name);
}

/** Inserts the rows into `table` (nothing that is there already); the number inserted. */
export function runRowsInsert(tx: Tx, table: RunTable, columns: string[], rows: Record<string, unknown>[]): Promise<number> {
  if (rows.length === 0) return Promise.resolve(0);
  const list = Prisma.raw(columns.map((c) => `"${c}"`).join(", "));
  const source = Prisma.raw(columns.map((c) => `r."${c}"`).join(", "));
  return tx.$executeRaw`
    INSERT INTO ${Prisma.raw(table)} (${list})
    SELECT ${source} FROM jsonb_populate_recordset(NULL::${Prisma.raw(table)}, ${JSON.stringify(rows)}::jsonb) r
    ON CONFLICT DO NOTHING`;
}
