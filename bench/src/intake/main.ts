// pnpm bench --intake [--quick]: intake through the real route. Signed deliveries over HTTP (keep-alive, 64 at once) to
// the production web server's trigger route (apps/web/server.ts on the built app, as the e2e tests start it: testkit's startWeb), beside a
// bare node:http server calling the same start (bare-server.ts) in the same run. See docs/performance.md.
import { triggerSettings } from "@holdfast/core/versions";
import { createDb } from "@holdfast/db";
import { createTestPrefix, startWeb } from "@holdfast/testkit";
import { repoRoot, webNodeFlags } from "@holdfast/testkit/procs";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchKey, chainGraph } from "../holdfast";
import { Meter } from "../measure/meter";
import { bounded, type Target } from "../targets";
import { cpuSeconds, loadAverage } from "../measure/proc";
import pg from "pg";
import { dropDatabase, freshDatabase } from "../pg";
import { publishBenchAutomation } from "../publish";
import { fmt } from "../report";
import { type Burst, closedLoop, openLoop, sender } from "./load";

const here = dirname(fileURLToPath(import.meta.url));
const concurrency = 64;

/** CPU seconds of a process and every process under it (tsx runs the web server in a child). */
function treeCpu(root: number | undefined): number {
  if (!root) return 0;
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      parent.set(Number(d), Number(readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1]?.split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  for (const pid of parent.keys()) {
    for (let p: number | undefined = pid; p && p > 1; p = parent.get(p)) {
      if (p === root) {
        total += cpuSeconds(pid);
        break;
      }
    }
  }
  return total;
}

interface IntakeRow {
  name: string;
  burst: Burst;
  /** CPU ms a delivery: the server's Node process(es), its PostgreSQL backends. */
  nodeMs: number;
  pgMs: number;
  load: number;
}

export async function runIntake(o: { quick: boolean; targets?: Target[] }): Promise<boolean> {
  if (!existsSync(join(repoRoot, "apps/web/.next/BUILD_ID"))) {
    console.log("intake: the web app is not built: run `flock /tmp/holdfast-web.lock pnpm --filter @holdfast/web build` first");
    return false;
  }
  process.env.HOLDFAST_SKIP_WEB_BUILD = "1"; // testkit's startWeb serves the existing build (it builds only under vitest)
  process.env.HOLDFAST_SECRET_KEY ||= benchKey;
  const deliveries = o.quick ? 300 : 4_000;
  const halfSeconds = o.quick ? 3 : 10;
  const dbName = `${process.env.BENCH_DATABASE ?? "holdfast_bench"}_intake`;
  const url = await freshDatabase(dbName);
  const keys = createTestPrefix();
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const meter = await Meter.open();
  const db = createDb(url, { poolSize: 2 });
  const appEnv = { DATABASE_URL: url, REDIS_URL: redisUrl, QUEUE_PREFIX: keys.prefix, LOG_LEVEL: "warn", HOLDFAST_SECRET_KEY: process.env.HOLDFAST_SECRET_KEY };
  console.log(
    `intake through the real route ${new Date().toISOString()}: ${cpus().length} cores, load average ${fmt(loadAverage(), 2)}; ` +
      `${deliveries} signed deliveries per row, ${concurrency} at once over keep-alive connections; no worker runs (starts only)`,
  );
  const auto = await publishBenchAutomation(db, { orgSlug: "bench", automationSlug: "intake", graph: chainGraph("http", 1, "http://127.0.0.1:9/") });
  const { signingSecret } = await triggerSettings(db, auto.orgId, auto.automationId, "signed");
  const web = await startWeb(appEnv);
  const webPid = pidOnPort(web.port);
  const bare = await startBare(appEnv);
  const path = "/api/hooks/bench/intake";
  const toWeb = sender(`${web.base}${path}`, signingSecret, `web${Date.now()}`, concurrency);
  const toBare = sender(`http://127.0.0.1:${bare.port}${path}`, signingSecret, `bare${Date.now()}`, concurrency);
  const rows: IntakeRow[] = [];
  let from = 0;
  const measure = async (name: string, pid: number | undefined, work: () => Promise<Burst>) => {
    // No stand-in ANALYZE inside a row: the tables were analyzed after the warm-up (below). The meter's whole-database
    // ANALYZE at full speed, 2 s into the half-peak row, came with stalls of 0.3-1.3 s there in three runs of five
    // (autovacuum analyzes a table at a time, throttled).
    const window = await meter.begin(dbName, [], { wal: false, analyze: false });
    const cpu0 = treeCpu(pid);
    const load = loadAverage();
    const burst = await work();
    const node = treeCpu(pid) - cpu0;
    await window.done();
    const m = await window.end();
    const pg = Object.entries(m.pgCpu).reduce((a, [, v]) => a + v, 0);
    const row = { name, burst, nodeMs: (node * 1000) / burst.deliveries, pgMs: (pg * 1000) / burst.deliveries, load };
    rows.push(row);
    const refused = Object.entries(burst.refused).map(([st, n]) => `${n} answered ${st}`).join(", ");
    console.log(
      `  ${name.padEnd(44)} ${fmt(burst.perSec).padStart(5)} deliveries/s, p50 ${fmt(burst.latencyMs?.p50, 1)} ms, p99 ${fmt(burst.latencyMs?.p99, 1)} ms, ` +
        `CPU ms a delivery: server ${fmt(row.nodeMs, 2)}, postgres ${fmt(row.pgMs, 2)}; ${burst.accepted}/${burst.deliveries} accepted${refused ? ` (${refused})` : ""} (load ${fmt(load, 1)})`,
    );
    return row;
  };
  try {
    // Warm both (first requests compile routes, open pools, plan statements); not measured.
    await closedLoop(toWeb, 200, concurrency, (from += 1_000_000));
    await closedLoop(toBare, 200, concurrency, (from += 1_000_000));
    await db.$executeRawUnsafe("ANALYZE");
    const webPeak = await measure("web (server.ts), trigger route, peak", webPid, () => closedLoop(toWeb, deliveries, concurrency, (from += 1_000_000)));
    const barePeak = await measure("bare node:http, the same startRun, peak", bare.pid, () => closedLoop(toBare, deliveries, concurrency, (from += 1_000_000)));
    const half = webPeak.burst.perSec / 2;
    const webHalf = await measure(`web at half its peak (${fmt(half, 1)}/s, open loop)`, webPid, () => openLoop(toWeb, half, halfSeconds, (from += 1_000_000)));
    // Where the slow ones were: at the row's start (new connections) or together mid-row (a stall).
    const slow = webHalf.burst.slowest?.map((d) => `${fmt(d.sentMs)}:${fmt(d.ms)}`).join(" ");
    if (slow) console.log(`  its slowest (sent at ms: took ms): ${slow}`);
    // A stall the bench's own process had (its sends late, its answers read late) is not the web's.
    const own = webHalf.burst.sender;
    if (own) console.log(`  the bench's sender: latest send ${fmt(own.lateMs, 1)} ms behind its schedule (at ${fmt(own.lateAtMs)} ms), its event loop held at most ${fmt(own.loopDelayMaxMs, 1)} ms`);
    const ratio = (100 * webPeak.burst.perSec) / barePeak.burst.perSec;
    const p99 = webHalf.burst.latencyMs?.p99 ?? Number.NaN;
    console.log(`intake, web / bare deliveries/s: ${fmt(webPeak.burst.perSec)}/${fmt(barePeak.burst.perSec)} = ${fmt(ratio, 1)}% (target >= 70%: ${ratio >= 70 ? "met" : "not met"})`);
    console.log(`intake, web p99 at half its peak: ${fmt(p99, 1)} ms (target <= 50 ms: ${p99 <= 50 ? "met" : "not met"})`);
    o.targets?.push(
      bounded("intake: web / bare node:http deliveries/s", ">=", 70, ratio, "%", 1, `(${fmt(webPeak.burst.perSec)} / ${fmt(barePeak.burst.perSec)})`),
      bounded("intake: web p99 at half its peak", "<=", 50, p99, " ms", 1),
    );
    const runs = await countRuns(url);
    const accepted = 400 + rows.reduce((a, r) => a + r.burst.accepted, 0);
    const refusedAll = rows.reduce((a, r) => a + r.burst.deliveries - r.burst.accepted, 0);
    console.log(`intake: ${runs} runs started for ${accepted} accepted deliveries (warm-up included), ${refusedAll} not accepted (target: equal, 0)`);
    return runs === accepted && refusedAll === 0;
  } finally {
    toWeb.close();
    toBare.close();
    await bare.stop();
    await web.stop();
    await db.$disconnect();
    await meter.close();
    await keys.clear();
    await dropDatabase(dbName).catch(() => {});
  }
}

/** The pid listening on this loopback port (the web server), from /proc/net/tcp and the fds. */
function pidOnPort(port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set(
    readFileSync("/proc/net/tcp", "utf8")
      .split("\n")
      .filter((l) => l.split(/\s+/)[2]?.endsWith(`:${hex}`) && l.split(/\s+/)[4] === "0A")
      .map((l) => l.split(/\s+/)[10]),
  );
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      for (const fd of readdirSync(`/proc/${d}/fd`)) {
        const link = readlinkSync(`/proc/${d}/fd/${fd}`);
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m && inodes.has(m[1])) return Number(d);
      }
    } catch {
      // not ours to read, or gone
    }
  }
  return undefined;
}

async function startBare(env: Record<string, string | undefined>): Promise<{ port: number; pid: number | undefined; stop(): Promise<void> }> {
  // The web's own Node flags (its garbage collector on the request thread), so the two servers differ in the route only.
  const child = spawn(process.execPath, [...webNodeFlags(), "--no-deprecation", "--import", "tsx", join(here, "bare-server.ts")], {
    env: { ...process.env, ...env, INTAKE_ORG: "bench", INTAKE_AUTOMATION: "intake" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", (code) => reject(new Error(`the bare intake server exited (${code}) before listening:\n${out}`)));
  });
  return {
    port,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }),
  };
}

async function countRuns(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM runs")).rows[0]?.n ?? 0;
  } finally {
    await c.end();
  }
}
