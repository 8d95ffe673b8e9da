import type { Db, Tx } from "@holdfast/db";

export interface PublishedStepId {
  id: string;
  /** The step's kind in the newest version that has the id. */
  kind: string;
  /** The newest published version that has the id. */
  lastVersion: number;
  /** The id is in the automation's newest published version. */
  inNewest: boolean;
}

/** Every step id any published version of the automation used, with the last version and kind it had. */
export function automationVersionsStepIds(tx: Tx, orgId: string, automationId: string): Promise<PublishedStepId[]> {
  return tx.$queryRaw<PublishedStepId[]>`
    WITH v AS (
      SELECT version, graph FROM automation_versions
      WHERE org_id = ${orgId} AND automation_id = ${automationId} AND published_at IS NOT NULL
    )
    SELECT node->>'id' AS id, (array_agg(node->>'kind' ORDER BY v.version DESC))[1] AS kind,
           max(v.version)::int AS "lastVersion", max(v.version) = (SELECT max(version) FROM v) AS "inNewest"
    FROM v CROSS JOIN LATERAL jsonb_array_elements(v.graph->'nodes') AS node
    GROUP BY node->>'id'
    ORDER BY 1`;
}

/** The automation's published versions numbered `a` and `b` (either may be missing). */
export function automationVersionsPublishedPair(
  db: Db | Tx,
  orgId: string,
  automationId: string,
  a: number,
  b: number,
): Promise<{ id: string; version: number; graph: unknown }[]> {
  return db.$queryRaw<{ id: string; version: number; graph: unknown }[]>`
    SELECT id, version, graph FROM automation_versions
    WHERE org_id = ${orgId} AND automation_id = ${automationId} AND published_at IS NOT NULL
      AND version IN (${a}, ${b})`;
}

/** The automation's published versions, newest first. */
export function automationVersionsPublished(db: Db | Tx, orgId: string, automationId: string): Promise<{ version: number; graph: unknown }[]> {
  return db.$queryRaw<{ version: number; graph: unknown }[]>`
    SELECT version, graph FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId} AND published_at IS NOT NULL
    ORDER BY version DESC`;
}

/** The automation's newest published version, or its published version `version` when given (undefined: none). */
export async function automationVersionsPublishedOne(
  db: Db | Tx,
  orgId: string,
  automationId: string,
  version?: number,
): Promise<{ version: number; graph: unknown } | undefined> {
  const rows = await db.$queryRaw<{ version: number; graph: unknown }[]>`
    SELECT version, graph FROM automation_versions
    WHERE org_id = ${orgId} AND automation_id = ${automationId} AND published_at IS NOT NULL
      AND (${version ?? null}::int IS NULL OR version = ${version ?? null}::int)
    ORDER BY version DESC LIMIT 1`;
  return rows[0];
}

export interface PublishedVersionRow {
  versionId: string;
  version: number;
  publishedAt: Date;
  publishedBy: string;
}

/** The automation's newest version with its graph (the caller holds the automation's row lock). */
export async function automationVersionsLatest(tx: Tx, orgId: string, automationId: string): Promise<(PublishedVersionRow & { graph: unknown }) | undefined> {
  const rows = await tx.$queryRaw<(PublishedVersionRow & { graph: unknown })[]>`
    SELECT id AS "versionId", version, graph, published_at AS "publishedAt", published_by AS "publishedBy"
    FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId}
    ORDER BY version DESC LIMIT 1`;
  return rows[0];
}

/** Inserts version `version`, published now (immutable from then on: a trigger refuses UPDATE and DELETE). */
export async function automationVersionsInsertPublished(
  tx: Tx,
  v: { orgId: string; automationId: string; version: number; graph: unknown; by: string },
): Promise<PublishedVersionRow> {
  const rows = await tx.$queryRaw<PublishedVersionRow[]>`
    INSERT INTO automation_versions (org_id, automation_id, version, graph, published_by, published_at)
    VALUES (${v.orgId}, ${v.automationId}, ${v.version}, ${JSON.stringify(v.graph)}::jsonb, ${v.by}, now())
    RETURNING id AS "versionId", version, published_at AS "publishedAt", published_by AS "publishedBy"`;
  return rows[0] as PublishedVersionRow;
}

/** The automation's published versions, newest first, each with its running runs. */
export function automationVersionsListPublished(
  db: Db | Tx,
  orgId: string,
  automationId: string,
): Promise<{ id: string; version: number; publishedAt: Date; publishedBy: string | null; running: number }[]> {
  return db.$queryRaw<{ id: string; version: number; publishedAt: Date; publishedBy: string | null; running: number }[]>`
    SELECT v.id, v.version, v.published_at AS "publishedAt", v.published_by AS "publishedBy",
           (SELECT count(*)::int FROM runs r WHERE r.version_id = v.id AND r.status = 'running') AS running
    FROM automation_versions v
    WHERE v.org_id = ${orgId} AND v.automation_id = ${automationId} AND v.published_at IS NOT NULL
    ORDER BY v.version DESC`;
}

export async function automationVersionsHasPublished(db: Db | Tx, orgId: string, automationId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId} AND published_at IS NOT NULL LIMIT 1`;
  return rows.length > 0;
}

/** Publishes a version inserted unpublished: the database clock stamps it, and from then on the row is immutable. */
export function automationVersionsMarkPublished(tx: Tx, versionId: string): Promise<number> {
  return tx.$executeRaw`UPDATE automation_versions SET published_at = now() WHERE id = ${versionId} AND published_at IS NULL`;
}

/** Every version of the automation (id, number, graph), newest first: the journey counts' nodes and versions list. */
export function automationVersionsAll(db: Db | Tx, orgId: string, automationId: string): Promise<{ id: string; version: number; graph: unknown }[]> {
  return db.$queryRaw<{ id: string; version: number; graph: unknown }[]>`
    SELECT id, version, graph FROM automation_versions WHERE org_id = ${orgId} AND automation_id = ${automationId}
    ORDER BY version DESC`;
}
