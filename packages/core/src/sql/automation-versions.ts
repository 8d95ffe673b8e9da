import type { Tx } from "@holdfast/db";

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
