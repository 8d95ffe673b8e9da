import { type ProcessKind, processKinds } from "../fleet";
import { createRng, deriveSeed } from "../rng";

export type FaultKind = "sigkill" | "sigstop" | "pg_restart" | "redis_restart";

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
  /** A frozen process stays stopped between these (longer than a lease, so its leases lapse while it sleeps). */
  stopMs: [number, number];
  downMs: [number, number];
}

/** How many kills and freezes each process kind gets: 20 at 10,000 runs, in proportion below, at least one. */
export const faultsPerKind = (runs: number) => Math.max(1, Math.ceil((20 * runs) / 10_000));
/** PostgreSQL and Redis restarts: 3 from 2,000 runs up, fewer for a short load, at least one. */
export const restartsFor = (runs: number) => Math.min(3, Math.max(1, Math.round((3 * runs) / 2_000)));

/**
 * The fault schedule, a pure function of the seed: the same seed and sizes give the same faults at the same
 * offsets, so a failure can be replayed with `--seed`. Process faults fall at random between 5% and 90% of the
 * load; database and Redis restarts each get their own slot of that window so one outage ends before the next.
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
  const outages: FaultKind[] = [...Array(o.pgRestarts).fill("pg_restart"), ...Array(o.redisRestarts).fill("redis_restart")];
  // Shuffle (Fisher-Yates), then one outage per slot, at a random point of its middle half.
  for (let i = outages.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [outages[i], outages[j]] = [outages[j] as FaultKind, outages[i] as FaultKind];
  }
  const slot = (to - from) / Math.max(1, outages.length);
  outages.forEach((kind, i) => {
    faults.push({ atMs: Math.round(from + slot * i + rng.between(0.25, 0.75) * slot), kind, durationMs: Math.round(rng.between(...o.downMs)) });
  });
  return faults.sort((a, b) => a.atMs - b.atMs);
}
