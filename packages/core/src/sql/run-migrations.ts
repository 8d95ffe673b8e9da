import type { Db, Tx } from "@holdfast/db";

/** Records a version migration's plan (versions/migrate.ts applyMigration); its id. */
export async function runMigrationsInsert(
  db: Db | Tx,
  m: { orgId: string; automationId: string; fromVersionId: string; toVersionId: string; mapping: unknown; removed: unknown; by: string },
): Promise<string | undefined> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO run_migrations (org_id, automation_id, from_version_id, to_version_id, mapping, removed_rule, created_by)
    VALUES (${m.orgId}, ${m.automationId}, ${m.fromVersionId}, ${m.toVersionId}, ${JSON.stringify(m.mapping)}::jsonb,
            ${JSON.stringify(m.removed)}::jsonb, ${m.by})
    RETURNING id`;
  return rows[0]?.id;
}

/** Adds one apply's counts to the migration; `open` while runs are left to move, else `done`. */
export function runMigrationsRecordApply(
  db: Db | Tx,
  migrationId: string,
  r: { migrated: number; cancelled: number; stayed: number; deferred: number; open: boolean },
): Promise<number> {
  return db.$executeRaw`
    UPDATE run_migrations SET migrated = migrated + ${r.migrated}, cancelled = cancelled + ${r.cancelled},
           stayed = ${r.stayed}, deferred = ${r.deferred}, status = ${r.open ? "open" : "done"}, updated_at = now()
    WHERE id = ${migrationId}`;
}
