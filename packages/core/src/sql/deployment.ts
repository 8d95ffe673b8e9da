import type { Tx } from "@holdfast/db";

/** Stores the key check if the database has none yet; returns the one the database holds (first writer wins). */
export async function deploymentKeyCheckEnsure(tx: Tx, check: string): Promise<string> {
  const rows = await tx.$queryRaw<{ keyCheck: string }[]>`
    WITH ins AS (
      INSERT INTO deployment_settings (id, key_check) VALUES (1, ${check}) ON CONFLICT (id) DO NOTHING RETURNING key_check
    )
    SELECT key_check AS "keyCheck" FROM ins UNION ALL SELECT key_check FROM deployment_settings WHERE id = 1 LIMIT 1`;
  return (rows[0] as { keyCheck: string }).keyCheck;
}
