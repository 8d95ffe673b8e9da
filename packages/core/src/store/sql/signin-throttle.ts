import type { Tx } from "@holdfast/db";

/**
 * The sign-in throttle's counters (`signin_throttle`: key, points, expire). rate-limiter-flexible reads and writes
 * them itself (people/auth/throttle.ts); `expire` is epoch milliseconds by the web process's clock, so a row is only
 * purged an hour after it lapsed, far beyond any clock difference between the web and the database.
 */
export function signinThrottlePurgeExpired(tx: Tx, limit: number): Promise<number> {
  return tx.$executeRaw`
    DELETE FROM signin_throttle WHERE key IN (
      SELECT key FROM signin_throttle
      WHERE expire IS NOT NULL AND expire < (extract(epoch FROM now()) * 1000)::bigint - 3600000
      LIMIT ${limit})`;
}
