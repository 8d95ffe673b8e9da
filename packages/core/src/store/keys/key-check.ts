import type { Db, Tx } from "@holdfast/db";
import { deploymentKeyCheckEnsure } from "../sql/deployment";
import { keyCheckOf, SecretKeyError, secretKey } from "./secret-key";

/**
 * Every process checks its key against the database at start-up: the first one records a check value, later ones
 * must match it. A process with the wrong key stops with a clear message instead of failing on each secret it reads.
 */
export async function checkSecretKey(db: Db | Tx, key: Buffer = secretKey()): Promise<void> {
  const stored = await deploymentKeyCheckEnsure(db as Tx, keyCheckOf(key));
  if (stored !== keyCheckOf(key)) {
    throw new SecretKeyError(
      "this secret key is not the one this database's secrets were encrypted with. Restore the key file from your backup, or set HOLDFAST_SECRET_KEY to the original key",
    );
  }
}
