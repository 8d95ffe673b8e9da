import type { Tx } from "@holdfast/db";

export interface StartTarget {
  orgId: string;
  automationId: string;
  webhookSecrets: string[];
  /** The newest published version, if any. */
  versionId: string | null;
  version: number | null;
  /** The database clock (epoch seconds): webhook signatures are checked against it. */
  now: number;
}

/** Resolves a trigger URL (org slug, automation slug) to the newest published version. */
export async function automationsFindStartTarget(
  tx: Tx,
  orgSlug: string,
  automationSlug: string,
): Promise<{ org: boolean; target?: StartTarget }> {
  const rows = await tx.$queryRaw<(StartTarget & { automationFound: boolean })[]>`
    SELECT o.id AS "orgId", a.id AS "automationId", a.id IS NOT NULL AS "automationFound",
           COALESCE(a.webhook_secrets, '{}') AS "webhookSecrets",
           v.id AS "versionId", v.version, EXTRACT(EPOCH FROM now())::float8 AS now
    FROM organisations o
    LEFT JOIN automations a ON a.org_id = o.id AND a.slug = ${automationSlug}
    LEFT JOIN LATERAL (
      SELECT id, version FROM automation_versions
      WHERE org_id = o.id AND automation_id = a.id AND published_at IS NOT NULL
      ORDER BY version DESC LIMIT 1
    ) v ON true
    WHERE o.slug = ${orgSlug}`;
  const row = rows[0];
  if (!row) return { org: false };
  if (!row.automationFound) return { org: true };
  const { automationFound: _, ...target } = row;
  return { org: true, target };
}

export async function versionsGraph(tx: Tx, orgId: string, versionId: string): Promise<unknown> {
  const rows = await tx.$queryRaw<{ graph: unknown }[]>`
    SELECT graph FROM automation_versions WHERE org_id = ${orgId} AND id = ${versionId}`;
  return rows[0]?.graph;
}
