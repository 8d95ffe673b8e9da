import type { Figures } from "./measure/meter";

export interface Quantiles {
  p50: number;
  p99: number;
}

/** One system in one scenario of the race. */
export interface RaceResult {
  system: "Holdfast" | "DBOS" | "graphile-worker";
  scenario: "http" | "noop";
  label: string;
  runs: number;
  /** Steps completed. */
  steps: number;
  seconds: number;
  runsPerSec: number;
  stepsPerSec: number;
  /** Runs kept in flight (closed loop), or null for an open-loop row. */
  inFlight: number | null;
  latencyMs: Quantiles;
  /**
   * Holdfast: the start's transaction (its now(), before its statement ran and its commit was flushed) to the first
   * step's claim, database clock; a peer: the start call's return to the first step's body, process clock.
   */
  firstDispatchMs: Quantiles | null;
  /**
   * Holdfast: the start call's return (after its commit) to the first step's claim: the driver's clock against the
   * database's, one machine's clock; negative when the claim came before the driver saw its commit.
   */
  firstFromReturnMs?: Quantiles | null;
  /**
   * Holdfast, where the server has track_commit_timestamp on: the start's commit (its recorded commit time) to the
   * first step's claim, database clock; unset where the server does not record commit times.
   */
  firstFromCommitMs?: Quantiles | null;
  /** An open-loop row's warm-up (HoldfastScenario.warmupRuns): how many arrivals, and their first steps' latency. */
  warmupRuns?: number;
  firstWarmupMs?: Quantiles | null;
  /** A step's settle commit to the next step's claim (Holdfast). */
  chainedDispatchMs: Quantiles | null;
  dispatchClock: "database" | "process";
  measured: Figures;
  /** The Node processes that are the system (its totals); the others are measured beside it (the no-op server). */
  systemNode: string[];
  lost: number;
  duplicated: number;
  /** The round of a main row (the race runs them in rounds); unset for the other rows. */
  round?: number;
}

export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

export function quantiles(values: number[]): Quantiles | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
}

/** Per step: commits, WAL bytes, and CPU ms of the system's Node processes and of its database backends. */
export function perStep(r: RaceResult) {
  const n = Math.max(1, r.steps);
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  const node = Object.fromEntries(Object.entries(r.measured.nodeCpu).map(([k, v]) => [k, (v * 1000) / n]));
  const pg = Object.fromEntries(Object.entries(r.measured.pgCpu).map(([k, v]) => [k, (v * 1000) / n]));
  const systemNode = Object.fromEntries(Object.entries(node).filter(([k]) => r.systemNode.includes(k)));
  return {
    commits: r.measured.commits / n,
    writeCommits: r.measured.writeCommits / n,
    walBytes: r.measured.walBytes / n,
    walBytesServer: r.measured.walBytesServer / n,
    node,
    pg,
    nodeMs: sum(systemNode),
    pgMs: sum(pg),
  };
}
