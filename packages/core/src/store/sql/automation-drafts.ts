import type { Db, Tx } from "@holdfast/db";

export interface DraftRow {
  graph: unknown;
  revision: number;
  updatedBy: string | null;
  updatedAt: Date;
}

/** Creates the automation's draft from `graph` when it has none (the first open of the editor). */
export function automationDraftsInsertIfNone(db: Db | Tx, orgId: string, automationId: string, graph: unknown): Promise<number> {
  return db.$executeRaw`
    INSERT INTO automation_drafts (automation_id, org_id, graph)
    VALUES (${automationId}, ${orgId}, ${JSON.stringify(graph)}::jsonb)
    ON CONFLICT (automation_id) DO NOTHING`;
}

export async function automationDraftsGet(db: Db | Tx, orgId: string, automationId: string): Promise<DraftRow | undefined> {
  const rows = await db.$queryRaw<DraftRow[]>`
    SELECT graph, revision, updated_by AS "updatedBy", updated_at AS "updatedAt" FROM automation_drafts
    WHERE org_id = ${orgId} AND automation_id = ${automationId}`;
  return rows[0];
}

/** Saves the draft if it is still at `baseRevision` (two tabs never overwrite each other); the new revision, else undefined. */
export async function automationDraftsSaveIfRevision(
  db: Db | Tx,
  orgId: string,
  automationId: string,
  graph: unknown,
  baseRevision: number,
  by: string,
): Promise<number | undefined> {
  const rows = await db.$queryRaw<{ revision: number }[]>`
    UPDATE automation_drafts SET graph = ${JSON.stringify(graph)}::jsonb, revision = revision + 1, updated_by = ${by}, updated_at = now()
    WHERE org_id = ${orgId} AND automation_id = ${automationId} AND revision = ${baseRevision}
    RETURNING revision`;
  return rows[0]?.revision;
}

/** The draft's graph, its row locked for the publish. */
export async function automationDraftsLockGraph(tx: Tx, orgId: string, automationId: string): Promise<{ graph: unknown } | undefined> {
  const rows = await tx.$queryRaw<{ graph: unknown }[]>`
    SELECT graph FROM automation_drafts WHERE org_id = ${orgId} AND automation_id = ${automationId} FOR UPDATE`;
  return rows[0];
}
