import type { Db, Tx } from "@holdfast/db";

/**
 * Takes or renews the named leadership if it is free, expired, or already ours. Compared with the database clock.
 * Returns true while this owner leads.
 */
export async function leaderLeasesAcquireOrRenew(tx: Tx, name: string, owner: string, leaseMs: number): Promise<boolean> {
  const rows = await tx.$queryRaw<{ owner: string }[]>`
    INSERT INTO leader_leases (name, owner, lease_until)
    VALUES (${name}, ${owner}, now() + make_interval(secs => ${leaseMs / 1000}))
    ON CONFLICT (name) DO UPDATE
      SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
          acquired_at = CASE WHEN leader_leases.owner = EXCLUDED.owner THEN leader_leases.acquired_at ELSE now() END
      WHERE leader_leases.owner = EXCLUDED.owner OR leader_leases.lease_until < now()
    RETURNING owner`;
  return rows[0]?.owner === owner;
}

/** Steps down at shutdown so a standby takes over at its next tick instead of after the lease. */
export function leaderLeasesRelease(tx: Tx, name: string, owner: string): Promise<number> {
  return tx.$executeRaw`UPDATE leader_leases SET lease_until = now() WHERE name = ${name} AND owner = ${owner}`;
}

export async function leaderLeasesCurrent(tx: Db | Tx, name: string): Promise<{ owner: string; leaseUntil: Date; live: boolean } | undefined> {
  const rows = await tx.$queryRaw<{ owner: string; leaseUntil: Date; live: boolean }[]>`
    SELECT owner, lease_until AS "leaseUntil", lease_until > now() AS live FROM leader_leases WHERE name = ${name}`;
  return rows[0];
}
