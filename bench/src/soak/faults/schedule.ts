import { type ProcessKind, processKinds } from "../fleet";
import { createRng, deriveSeed } from "../rng";

/**
 * pg_failover: the PostgreSQL leader's host dies (Patroni promotes the standby; the dead node comes back as standby).
 * redis_failover: a Redis Cluster master dies (its replica is promoted; the dead node rejoins as a replica).
 * db_cut: one lane worker's network path to the database is cut (connections reset, new ones refused) for a while.
 * The last three only in the cluster soak, which has no single PostgreSQL or Redis to restart.
 */
export type FaultKind = "sigkill" | "sigstop" | "pg_restart" | "redis_restart" | "pg_failover" | "redis_failover" | "db_cut";

/** The faults that take (part of) a shared service away: one at a time, each in its own slot of the load. */
export const outageKinds: readonly FaultKind[] = ["pg_restart", "redis_restart", "pg_failover", "redis_failover", "db_cut"];

export interface Fault {
  /** Milliseconds after the load began. */
  atMs: number;
  kind: FaultKind;
  /** For process faults: the kind of process, and which one of them (index, taken modulo how many there are). */
  target?: ProcessKind;
  pick?: number;
  /** How long the process stays frozen, or the service stays down. */
  durationMs: number;
}

export interface ScheduleOptions {
  seed: number;
  /** The load's planned length: every fault falls inside it. */
  loadMs: number;
  /** SIGKILLs and SIGSTOPs per process kind. */
  perKind: number;
  pgRestarts: number;
  redisRestarts: number;
  /** Cluster soak: PostgreSQL leader kills, Redis master kills, database path cuts (default 0 each). */
  pgFailovers?: number;
  redisFailovers?: number;
  dbCuts?: number;
  /** How long a database path cut lasts. */
  cutMs?: number;
  /** A frozen process stays stopped between these (longer than a lease, so its leases lapse while it sleeps). */
  stopMs: [number, number];
  downMs: [number, number];
}

/** How many kills and freezes each process kind gets: 20 at 10,000 runs, in proportion below, at least one. */
export const faultsPerKind = (runs: number) => Math.max(1, Math.ceil((20 * runs) / 10_000));
/** PostgreSQL and Redis restarts: 3 from 2,000 runs up, fewer for a short load, at least one. */
export const restartsFor = (runs: number) => Math.min(3, Math.max(1, Math.round((3 * runs) / 2_000)));
/** The cluster soak's outages whatever the length: the leader and a master killed twice each (the second kill fails
 *  over to the node the first one killed, restarted meanwhile), one database path cut of 10 s. */
export const clusterOutages = { pgFailovers: 2, redisFailovers: 2, dbCuts: 1, cutMs: 10_000 } as const;

/**
 * The fault schedule, a pure function of the seed: the same seed and sizes give the same faults at the same
 * offsets, so a failure can be replayed with `--seed`. Process faults fall at random between 5% and 90% of the
 * load; database and Redis restarts (in the cluster soak: failovers and the cut) each get their own slot of that
 * window so one outage ends before the next (inject.ts also waits for one to end before starting the next).
 */
export function planFaults(o: ScheduleOptions): Fault[] {
  const rng = createRng(deriveSeed(o.seed, "faults"));
  const from = 0.05 * o.loadMs;
  const to = 0.9 * o.loadMs;
  const faults: Fault[] = [];
  for (const target of processKinds) {
    for (let i = 0; i < o.perKind; i++) {
      faults.push({ atMs: Math.round(rng.between(from, to)), kind: "sigkill", target, pick: rng.int(0, 1_000), durationMs: 0 });
      faults.push({ atMs: Math.round(rng.between(from, to)), kind: "sigstop", target, pick: rng.int(0, 1_000), durationMs: Math.round(rng.between(...o.stopMs)) });
    }
  }
  const outages: FaultKind[] = [
    ...Array(o.pgRestarts).fill("pg_restart"),
    ...Array(o.redisRestarts).fill("redis_restart"),
    ...Array(o.pgFailovers ?? 0).fill("pg_failover"),
    ...Array(o.redisFailovers ?? 0).fill("redis_failover"),
    ...Array(o.dbCuts ?? 0).fill("db_cut"),
  ];
  // Shuffle (Fisher-Yates), then one outage per slot, at a random point of its middle half.
  for (let i = outages.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [outages[i], outages[j]] = [outages[j] as FaultKind, outages[i] as FaultKind];
  }
  const slot = (to - from) / Math.max(1, outages.length);
  outages.forEach((kind, i) => {
    const atMs = Math.round(from + slot * i + rng.between(0.25, 0.75) * slot);
    // A failover lasts as long as the cluster takes (measured); a cut lasts cutMs; a restart a seeded while.
    const durationMs = kind === "db_cut" ? (o.cutMs ?? 10_000) : kind.endsWith("_failover") ? 0 : Math.round(rng.between(...o.downMs));
    faults.push({ atMs, kind, ...(kind === "db_cut" ? { target: "lane-worker" as const } : {}), durationMs });
  });
  return faults.sort((a, b) => a.atMs - b.atMs);
}
