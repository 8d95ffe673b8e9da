import type { Db, Tx } from "@holdfast/db";

/** Records a version migration's plan (run/run-migrations/migrate.ts applyMigration); its id. */
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

/** Whether the migration is this automation's, between these two version numbers (a repeated apply names it). */
export async function runMigrationsIsOf(
  db: Db | Tx,
  m: { orgId: string; migrationId: string; automationId: string; fromVersion: number; toVersion: number },
): Promise<boolean> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT m.id FROM run_migrations m
    JOIN automation_versions f ON f.id = m.from_version_id AND f.version = ${m.fromVersion}
    JOIN automation_versions t ON t.id = m.to_version_id AND t.version = ${m.toVersion}
    WHERE m.org_id = ${m.orgId} AND m.id = ${m.migrationId} AND m.automation_id = ${m.automationId}`;
  return rows.length > 0;
}

/** The automation's migrations, newest first. */
export function runMigrationsList(
  db: Db | Tx,
  orgId: string,
  automationId: string,
): Promise<{ id: string; status: string; migrated: number; deferred: number; createdBy: string; createdAt: Date }[]> {
  return db.$queryRaw<{ id: string; status: string; migrated: number; deferred: number; createdBy: string; createdAt: Date }[]>`
    SELECT id, status, migrated, deferred, created_by AS "createdBy", created_at AS "createdAt" FROM run_migrations
    WHERE org_id = ${orgId} AND automation_id = ${automationId} ORDER BY created_at DESC`;
}
