// pnpm soak [--runs N] [--seed S] [--rate R] [--drain-seconds D] [--max-seconds M] [--keep] [--verbose] [--report FILE]: the chaos soak
// (bench/src/soak/soak.ts). --report writes the report with its whole timeline (CPU shares every 10 s) to FILE.
// --cluster runs it on the clustered topology (Patroni + HAProxy + PgBouncer, Redis Cluster) with leader and master
// kills and a database path cut (--pg-failovers, --redis-failovers, --cuts: how many; default 2, 2, 1).
// --upgrade-from REF (usually release.json's previousRelease) is the rolling upgrade under traffic (docs/operations.md,
// "Upgrading under traffic"): the release at REF, built from its own sources, runs every process on a database its
// CLI migrated; under load this checkout's migrations apply and each process is replaced by this checkout's, one at
// a time (--upgrade-hold S: seconds the old processes run alone on the new schema first, default 10). No random
// faults in this mode.
// Prints the report and, last, one line `SOAK_RESULT <json>`; exits 1 when an invariant broke or the soak stalled
// (--max-seconds, default the drain bound plus 600: it then says in which stage).
import { randomInt } from "node:crypto";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

// The providers listen on loopback, which the egress guard refuses unless named (as in the tests); set before core loads.
process.env.HOLDFAST_EGRESS_ALLOW ??= "127.0.0.1,::1,localhost";
const { formatReport } = await import("./report");
const { runSoak } = await import("./soak");

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10000" },
    seed: { type: "string" },
    rate: { type: "string" },
    "drain-seconds": { type: "string", default: "900" },
    "max-seconds": { type: "string" },
    "pg-restarts": { type: "string" },
    "redis-restarts": { type: "string" },
    "per-kind": { type: "string" },
    cluster: { type: "boolean", default: false },
    "pg-failovers": { type: "string" },
    "redis-failovers": { type: "string" },
    cuts: { type: "string" },
    "upgrade-from": { type: "string" },
    "upgrade-hold": { type: "string" },
    keep: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    report: { type: "string" },
  },
});
const int = (name: string, v: string | undefined, min: number) => {
  if (v === undefined) return undefined;
  const x = Number(v);
  if (!Number.isInteger(x) || x < min) {
    console.error(`--${name} must be a whole number of at least ${min}`);
    process.exit(64);
  }
  return x;
};
const runs = int("runs", values.runs, 1) as number;
const seed = int("seed", values.seed, 0) ?? randomInt(1, 2 ** 31 - 1);
const rate = values.rate === undefined ? 3 : Number(values.rate);
if (!(rate > 0)) {
  console.error("--rate must be a positive number of deliveries per second");
  process.exit(64);
}
if (values["upgrade-from"] && values.cluster) {
  console.error("--upgrade-from runs on the single-node topology: leave out --cluster");
  process.exit(64);
}
const result = await runSoak({
  runs,
  seed,
  rate,
  drainSeconds: int("drain-seconds", values["drain-seconds"], 10) as number,
  ...(values["max-seconds"] ? { maxSeconds: int("max-seconds", values["max-seconds"], 60) as number } : {}),
  onStall: (stalled) => {
    console.log(formatReport(stalled, { fullTimeline: false }));
    console.log(`SOAK_RESULT ${JSON.stringify(stalled)}`);
    process.exit(1);
  },
  ...(values["pg-restarts"] ? { pgRestarts: int("pg-restarts", values["pg-restarts"], 0) as number } : {}),
  ...(values["redis-restarts"] ? { redisRestarts: int("redis-restarts", values["redis-restarts"], 0) as number } : {}),
  ...(values["per-kind"] ? { perKind: int("per-kind", values["per-kind"], 0) as number } : {}),
  cluster: values.cluster,
  ...(values["pg-failovers"] ? { pgFailovers: int("pg-failovers", values["pg-failovers"], 0) as number } : {}),
  ...(values["redis-failovers"] ? { redisFailovers: int("redis-failovers", values["redis-failovers"], 0) as number } : {}),
  ...(values.cuts ? { dbCuts: int("cuts", values.cuts, 0) as number } : {}),
  ...(values["upgrade-from"] ? { upgradeFrom: values["upgrade-from"] } : {}),
  ...(values["upgrade-hold"] ? { upgradeHoldSeconds: int("upgrade-hold", values["upgrade-hold"], 0) as number } : {}),
  keep: values.keep,
  verbose: values.verbose,
});
console.log(formatReport(result, { fullTimeline: false }));
if (values.report) writeFileSync(values.report, `${formatReport(result, { fullTimeline: true })}\n`);
console.log(`SOAK_RESULT ${JSON.stringify(result)}`);
process.exit(result.ok ? 0 : 1);
