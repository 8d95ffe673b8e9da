import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type Result, runHoldfast, type Scenario } from "./holdfast";
import { freshDatabase } from "./pg";

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    runs: { type: "string" },
    only: { type: "string" },
    profile: { type: "string" },
  },
});

async function startNoop(): Promise<{ url: string; stop(): void; pid: number | undefined }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "noop-server.ts")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) => {
    child.stdout.on("data", (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m?.[1]) resolve(m[1]);
    });
  });
  return { url: `http://127.0.0.1:${port}/noop`, stop: () => child.kill(), pid: child.pid };
}

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "-");
function row(r: Result): string {
  return [
    r.label.padEnd(28),
    fmt(r.runsPerSec, 1).padStart(8),
    fmt(r.stepsPerSec).padStart(8),
    `${fmt(r.latencyMs.p50)}/${fmt(r.latencyMs.p95)}/${fmt(r.latencyMs.p99)}`.padStart(16),
    (r.dispatchMs ? `${fmt(r.dispatchMs.p50, 1)}/${fmt(r.dispatchMs.p99, 1)}` : "-").padStart(12),
    fmt(r.commitsPerStep, 2).padStart(8),
    fmt(r.walBytesPerStep).padStart(8),
    fmt(r.nodeCpuPer1kSteps, 2).padStart(8),
    fmt(r.pgCpuPer1kSteps, 2).padStart(8),
    `${r.lost}/${r.duplicated}`.padStart(8),
  ].join(" ");
}

const dbName = "holdfast_bench";
const url = await freshDatabase(dbName);
const noop = await startNoop();
const env = { url, dbName, redisPrefix: `hf_bench_${process.pid}`, noopUrl: noop.url };
const runs = Number(values.runs ?? (values.quick ? 50 : 500));
const scenarios: Scenario[] = [{ label: "http x10, 1 worker", kind: "http", runs, steps: 10, laneWorkers: 1, ...(values.profile ? { profileDir: values.profile } : {}) }];
console.log(
  `${"scenario".padEnd(28)} ${"runs/s".padStart(8)} ${"steps/s".padStart(8)} ${"lat p50/95/99".padStart(16)} ${"disp p50/99".padStart(12)} ${"com/step".padStart(8)} ${"WAL/step".padStart(8)} ${"nodeCPU".padStart(8)} ${"pgCPU".padStart(8)} ${"lost/dup".padStart(8)}`,
);
for (const s of scenarios) console.log(row(await runHoldfast(s, env)));
noop.stop();
process.exit(0);
