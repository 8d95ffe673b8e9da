// pnpm bench [--quick] [--runs N] [--profile DIR]: the engine beside its peers and against the database's limit,
// all measured in this one run on this machine. See docs/performance.md.
import { spawn } from "node:child_process";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type Result, runHoldfast } from "./holdfast";
import { measureLimit } from "./limit";
import { dropDatabase, freshDatabase, pidCpu, setting } from "./pg";

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    runs: { type: "string" },
    profile: { type: "string" },
    "skip-peers": { type: "boolean", default: false },
  },
});
const quick = values.quick;
const runs = Number(values.runs ?? (quick ? 50 : 500));
const benchStart = Date.now();

async function startNoop(): Promise<{ url: string; stop(): void; stats(): Promise<{ keys: number; repeated: number }> }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "noop-server.ts")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) => {
    child.stdout.on("data", (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m?.[1]) resolve(m[1]);
    });
  });
  const base = `http://127.0.0.1:${port}`;
  return { url: `${base}/noop`, stop: () => child.kill(), stats: async () => (await fetch(`${base}/stats`)).json() as never };
}

async function peer(name: "dbos" | "graphile", peerRuns: number) {
  const db = `holdfast_bench_${name}`;
  const url = await freshDatabase(db, false);
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "peers", `${name}.ts`)], {
    env: { ...process.env, PEER_DATABASE_URL: url, PEER_RUNS: String(peerRuns), PEER_STEPS: "10" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let cpu = 0;
  child.stdout.on("data", (d) => {
    out += d;
    cpu = Math.max(cpu, pidCpu(child.pid));
  });
  const poll = setInterval(() => (cpu = Math.max(cpu, pidCpu(child.pid))), 200);
  await new Promise((resolve) => child.on("exit", resolve));
  clearInterval(poll);
  await dropDatabase(db);
  const r = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { completed: number; steps: number; seconds: number; runs: number };
  return { name, stepsPerSec: r.steps / r.seconds, runsPerSec: r.completed / r.seconds, lost: r.runs - r.completed, nodeCpuPer1kSteps: (cpu / r.steps) * 1000 };
}

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "-");
const header = `${"scenario".padEnd(30)} ${"runs/s".padStart(7)} ${"steps/s".padStart(8)} ${"latency p50/95/99 ms".padStart(21)} ${"dispatch p50/99".padStart(15)} ${"commit/st".padStart(9)} ${"WAL B/st".padStart(8)} ${"node s/1k".padStart(9)} ${"pg s/1k".padStart(8)} ${"lost/dup".padStart(8)}`;
function row(r: Result): string {
  return [
    r.label.padEnd(30),
    fmt(r.runsPerSec, 1).padStart(7),
    fmt(r.stepsPerSec).padStart(8),
    `${fmt(r.latencyMs.p50)}/${fmt(r.latencyMs.p95)}/${fmt(r.latencyMs.p99)}`.padStart(21),
    (r.dispatchMs ? `${fmt(r.dispatchMs.p50, 1)}/${fmt(r.dispatchMs.p99, 1)}` : "-").padStart(15),
    fmt(r.commitsPerStep, 2).padStart(9),
    fmt(r.walBytesPerStep).padStart(8),
    fmt(r.nodeCpuPer1kSteps, 2).padStart(9),
    fmt(r.pgCpuPer1kSteps, 2).padStart(8),
    `${r.lost}/${r.duplicated}`.padStart(8),
  ].join(" ");
}

const dbName = process.env.BENCH_DATABASE ?? "holdfast_bench";
const url = await freshDatabase(dbName);
const noop = await startNoop();
const env = { url, dbName, redisPrefix: process.env.BENCH_REDIS_PREFIX ?? `hf_bench_${process.pid}`, noopUrl: noop.url };
console.log(
  `holdfast bench: ${cpus().length} cores, PostgreSQL synchronous_commit=${await setting(url, "synchronous_commit")}, ` +
    `${runs} runs of 10 steps per scenario${quick ? " (quick)" : ""}\n`,
);
console.log(header);
const results: Result[] = [];
const show = (r: Result) => {
  results.push(r);
  console.log(row(r));
};
const profile = values.profile ? { profileDir: values.profile } : {};
const peak = await runHoldfast({ label: "http x10, 1 lane worker", kind: "http", runs, steps: 10, laneWorkers: 1, ...profile }, env);
show(peak);
show(await runHoldfast({ label: "branch x10 (inline)", kind: "branch", runs, steps: 10, laneWorkers: 1 }, env));

let limit: Awaited<ReturnType<typeof measureLimit>> | undefined;
let limitNoEffects: Awaited<ReturnType<typeof measureLimit>> | undefined;
const peers: Awaited<ReturnType<typeof peer>>[] = [];
if (!quick) {
  for (const workers of [2, 4]) show(await runHoldfast({ label: `http x10, ${workers} lane workers`, kind: "http", runs, steps: 10, laneWorkers: workers }, env));
  show(await runHoldfast({ label: "http x10, sweep only (no Redis)", kind: "http", runs, steps: 10, laneWorkers: 1, sweepOnly: true }, env));
  const half = Math.max(1, peak.runsPerSec / 2);
  show(await runHoldfast({ label: `http x10 at half peak (${fmt(half, 1)} runs/s)`, kind: "http", runs: Math.min(runs, Math.round(half * 20)), steps: 10, laneWorkers: 1, rate: half }, env));
  limit = await measureLimit(url, dbName, 10, 8);
  limitNoEffects = await measureLimit(url, dbName, 10, 8, false);
  if (!values["skip-peers"]) {
    peers.push(await peer("dbos", runs));
    peers.push(await peer("graphile", runs));
  }
}
console.log("\nNode CPU s per 1,000 steps by process:");
for (const r of results) console.log(`  ${r.label.padEnd(40)} ${Object.entries(r.cpuByApp).map(([k, v]) => `${k} ${v}`).join(", ")}`);
const effects = await noop.stats();
noop.stop();

console.log("");
const best = Math.max(...results.filter((r) => r.label.startsWith("http")).map((r) => r.stepsPerSec));
if (limit) {
  console.log(
    `database limit (pgbench -M prepared, the writes of a chained effect step in one commit, 8 clients, 10 s): ${fmt(limit.stepsPerSec)} steps/s, ` +
      `${fmt(limit.commitsPerStep, 2)} commits/step, ${fmt(limit.walBytesPerStep)} WAL bytes/step, ${fmt(limit.pgCpuPer1kSteps, 2)} pg CPU s/1k steps`,
  );
  if (limitNoEffects) {
    console.log(
      `  (the same without the effect ledger's two writes: ${fmt(limitNoEffects.stepsPerSec)} steps/s, ${fmt(limitNoEffects.walBytesPerStep)} WAL bytes/step, ` +
        `${fmt(limitNoEffects.pgCpuPer1kSteps, 2)} pg CPU s/1k steps; engine / that: ${fmt((100 * best) / limitNoEffects.stepsPerSec, 1)}%)`,
    );
  }
  console.log(`engine / database limit: ${fmt((100 * best) / limit.stepsPerSec, 1)}% (target >= 50%)`);
}
for (const p of peers) {
  const target = p.name === "dbos" ? 1.5 : 2;
  console.log(
    `${p.name.padEnd(9)} ${fmt(p.stepsPerSec)} steps/s (${fmt(p.runsPerSec, 1)} runs/s, node CPU ${fmt(p.nodeCpuPer1kSteps, 2)} s/1k steps, lost ${p.lost}); ` +
      `engine/${p.name} = ${fmt(best / p.stepsPerSec, 2)}x (target >= ${target}x)`,
  );
}
const halfRow = results.find((r) => r.label.includes("half peak"));
if (halfRow?.dispatchMs) {
  console.log(
    `dispatch at half peak (settle commit -> next claim): p50 ${fmt(halfRow.dispatchMs.p50, 1)} ms (target <= 5), p99 ${fmt(halfRow.dispatchMs.p99, 1)} ms (target <= 25)` +
      (halfRow.firstDispatchMs
        ? `; first step of a run (walk -> relay -> Redis -> claim): p50 ${fmt(halfRow.firstDispatchMs.p50, 1)} ms, p99 ${fmt(halfRow.firstDispatchMs.p99, 1)} ms`
        : ""),
  );
}
const lost = results.reduce((a, r) => a + r.lost, 0) + peers.reduce((a, p) => a + p.lost, 0);
const dup = results.reduce((a, r) => a + r.duplicated, 0);
console.log(`HTTP effects: ${effects.keys} distinct Idempotency-Keys, ${effects.repeated} sent more than once`);
console.log(`lost steps: ${lost}, duplicated steps: ${dup} (target 0 and 0)`);
console.log(`bench took ${fmt((Date.now() - benchStart) / 1000)} s`);
if (!process.env.BENCH_KEEP_DB) await dropDatabase(dbName).catch(() => {});
process.exit(lost === 0 && dup === 0 ? 0 : 1);
