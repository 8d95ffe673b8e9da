import type { Tx } from "@holdfast/db";

/**
 * Stores the key check if the database has none yet; returns the one the database holds (first writer wins).
 *
 * Processes started together on a new database race here. The loser's insert waits for the winner's commit and then
 * does nothing, but its statement's snapshot was taken before that commit, so the same statement cannot read the
 * winner's row: a second statement, with a snapshot taken after the wait, does.
 */
export async function deploymentKeyCheckEnsure(tx: Tx, check: string): Promise<string> {
  const inserted = await tx.$queryRaw<{ keyCheck: string }[]>`
    WITH ins AS (
      INSERT INTO deployment_settings (id, key_check) VALUES (1, ${check}) ON CONFLICT (id) DO NOTHING RETURNING key_check
    )
    SELECT key_check AS "keyCheck" FROM ins UNION ALL SELECT key_check FROM deployment_settings WHERE id = 1 LIMIT 1`;
  if (inserted[0]) return inserted[0].keyCheck;
  const stored = await tx.$queryRaw<{ keyCheck: string }[]>`SELECT key_check AS "keyCheck" FROM deployment_settings WHERE id = 1`;
  if (!stored[0]) throw new Error("deployment_settings has no key check after inserting one");
  return stored[0].keyCheck;
}
