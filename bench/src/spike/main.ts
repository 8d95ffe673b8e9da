// pnpm bench --spike [--quick] [--waits N] [--orgs N] [--spreads 0,600]: the 09:00 spike. N waits across the
// organisations (the first holding half) due at the same instant (spread 0) or spread over S seconds, fired by the
// real engine, sweeper and relay, with the queue working (each wait's delayed job in Redis) and with every delayed
// job lost (only the sweeper's due sweep fires them). See docs/performance.md.
import { randomBytes } from "node:crypto";
import { cpus } from "node:os";
import { createDb } from "@holdfast/db";
import { createTestPrefix } from "@holdfast/testkit";
import { type AppProcess, spawnApp } from "@holdfast/testkit/procs";
import pg from "pg";
import { Meter } from "../measure/meter";
import { loadAverage } from "../measure/proc";
import { dropDatabase, freshDatabase } from "../pg";
import { fmt } from "../report";
import { bounded, type Target } from "../targets";
import { jain, readSpike, type SpikeFigures } from "./measure";
import { createOrgs, publishDelayedJobs, writeWaits } from "./seed";

export interface SpikeOptions {
  quick: boolean;
  waits?: number | undefined;
  spreads?: number[] | undefined;
  orgs?: number | undefined;
  /** Only the cases with the queue working, or only those with every delayed job lost (both when absent). */
  queue?: "working" | "lost" | undefined;
  /** Where the spread-0 cases add their rows of the targets table (bench --all). */
  targets?: Target[] | undefined;
}

interface SpikeCase {
  waits: number;
  orgs: number;
  spread: number;
  queue: boolean;
}

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const benchKey = process.env.HOLDFAST_SECRET_KEY || randomBytes(32).toString("hex");

export async function runSpike(o: SpikeOptions): Promise<boolean> {
  const waits = o.waits ?? (o.quick ? 5_000 : 100_000);
  const orgs = o.orgs ?? 100;
  const spreads = o.spreads ?? (o.quick ? [0, 30] : [0, 600]);
  const began = Date.now();
  console.log(
    `holdfast bench --spike ${new Date().toISOString()}: ${cpus().length} cores, load average ${fmt(loadAverage(), 2)}; ` +
      `${waits} waits across ${orgs} organisations (the first holds half), spreads ${spreads.join(", ")} s; ` +
      "engine, sweeper and relay with their default settings\n",
  );
  const meter = await Meter.open();
  let lost = 0;
  let duplicated = 0;
  try {
    for (const spread of spreads) {
      for (const queue of o.queue === "working" ? [true] : o.queue === "lost" ? [false] : [true, false]) {
        const f = await runCase({ waits, orgs, spread, queue }, meter, o.targets);
        lost += f.lost;
        duplicated += f.duplicated;
      }
    }
  } finally {
    await meter.close();
  }
  console.log(`spike: lost timers or runs: ${lost}, duplicated firings: ${duplicated} (target 0 and 0; every case)`);
  console.log(`spike took ${fmt((Date.now() - began) / 1000)} s; load average now ${fmt(loadAverage(), 2)}`);
  return lost === 0 && duplicated === 0;
}

async function runCase(c: SpikeCase, meter: Meter, table?: Target[]): Promise<{ lost: number; duplicated: number }> {
  const dbName = process.env.BENCH_SPIKE_DATABASE ?? "holdfast_bench_spike";
  const url = await freshDatabase(dbName);
  // Its own Redis key prefix, removed afterwards (the delayed jobs of 100,000 waits are not left behind).
  const keys = createTestPrefix();
  const prefix = keys.prefix;
  const db = createDb(url, { poolSize: 2, applicationName: "holdfast-bench-seed" });
  const sql = new pg.Client({ connectionString: url, application_name: "holdfast-bench-seed" });
  await sql.connect();
  const apps: AppProcess[] = [];
  try {
    const orgs = await createOrgs(db, c.orgs, c.waits, c.spread);
    const env: Record<string, string> = { DATABASE_URL: url, QUEUE_PREFIX: prefix, REDIS_URL: redisUrl, LOG_LEVEL: "info", HOLDFAST_SECRET_KEY: benchKey };
    apps.push(spawnApp("relay", { env }), spawnApp("engine", { env }), spawnApp("sweeper", { env }));
    await Promise.all(apps.map((a) => a.waitForOutput(/ready/, 120_000)));

    // Due far enough ahead for the writing and the publishing to finish first (checked below).
    // Writing runs at about 2,000 waits/s and publishing about as fast on this machine under load.
    const leadSeconds = Math.max(15, Math.ceil(c.waits / (c.queue ? 800 : 1_600)) + 15);
    const seedStart = performance.now();
    const dueAt: string = (await sql.query("SELECT (now() + make_interval(secs => $1))::text AS t", [leadSeconds])).rows[0].t;
    const written = await writeWaits(sql, orgs, dueAt, c.spread);
    const wroteIn = (performance.now() - seedStart) / 1000;
    const published = c.queue ? await publishDelayedJobs(sql, redisUrl, prefix) : null;
    const setupIn = (performance.now() - seedStart) / 1000;
    const [{ ahead }] = (await sql.query("SELECT EXTRACT(EPOCH FROM $1::timestamptz - now())::float8 AS ahead", [dueAt])).rows;
    const label = `spread ${c.spread} s, ${c.queue ? "queue working" : "every delayed job lost (sweep only)"}`;
    console.log(
      `${label}: ${written} waits written in ${fmt(wroteIn, 1)} s${published ? `, their delayed jobs published (${published.timers} timers in ${published.jobs} jobs)` : ", no delayed jobs"}; ` +
        (ahead > 0 ? `setup done ${fmt(ahead, 1)} s before the first due instant` : `SETUP OVERRAN the first due instant by ${fmt(-ahead, 1)} s (figures include it)`) +
        ` (setup ${fmt(setupIn, 1)} s)`,
    );

    // The CPU window opens a second before the first due instant: before it the processes only idle (their maintenance
    // loops over a minute or two of lead-in), which is no timer's cost.
    if (ahead > 1) await new Promise((r) => setTimeout(r, (ahead - 1) * 1000));
    const window = await meter.begin(dbName, apps.map((a) => ({ name: a.name, pid: () => a.pid() })), { wal: false });
    // Until every run walked past its wait, or a bound well past the last due instant.
    const deadline = Date.now() + (Math.max(0, ahead) + c.spread + 40 * 60) * 1000;
    for (;;) {
      // Whether any run is still going (runs_running_idx: a look, not a count of 100,000 rows every second beside the work).
      const [{ open }] = (await sql.query("SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'running') AS open")).rows;
      if (!open) break;
      const dead = apps.find((a) => a.exits.length > 0);
      if (dead) throw new Error(`${label}: ${dead.name} exited\n${dead.output().slice(-2000)}`);
      if (Date.now() > deadline) {
        const [{ left }] = (await sql.query("SELECT count(*)::int AS left FROM runs WHERE status = 'running'")).rows;
        console.log(`${label}: ${left} runs not finished 40 minutes after the last due instant (counted as lost below)`);
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    await window.done();
    await Promise.all(apps.splice(0).map((a) => a.stop()));
    const measured = await window.end();
    delete measured.pgCpu["holdfast-bench-seed"]; // the bench's own once-a-second look for running runs
    const f = await readSpike(sql);
    const lost = f.timers - f.fired + (f.timers - f.runsCompleted);
    const duplicated = f.extraFiredEvents;
    print(f, measured.nodeCpu, measured.pgCpu, measured.load, lost, duplicated, c);
    if (c.spread === 0) table?.push(...spikeTargets(f, measured.nodeCpu, measured.pgCpu, c, lost, duplicated));
    return { lost, duplicated };
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
    await keys.clear();
    await sql.end();
    await db.$disconnect();
    if (!process.env.BENCH_KEEP_DB) await dropDatabase(dbName).catch(() => {});
  }
}

function print(
  f: SpikeFigures,
  nodeCpu: Record<string, number>,
  pgCpu: Record<string, number>,
  load: { start: number; end: number },
  lost: number,
  duplicated: number,
  c: SpikeCase,
) {
  const big = f.orgs[0];
  const small = f.orgs.slice(1);
  const p99s = f.orgs.map((o) => o.p99);
  const smallP99 = small.map((o) => o.p99).sort((a, b) => a - b);
  const ms = (n: number | undefined) => fmt(n, 0);
  const cpu = (o: Record<string, number>) =>
    Object.entries(o)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${fmt((v * 1000) / Math.max(1, f.fired), 3)}`)
      .join(", ");
  console.log(
    [
      `  fired ${f.fired}/${f.timers} (${Object.entries(f.firedBy).map(([k, v]) => `${k} ${v}`).join(", ")}); runs completed ${f.runsCompleted}; lost ${lost}, duplicated ${duplicated}; load ${fmt(load.start, 1)}-${fmt(load.end, 1)}`,
      `  timers fired per second: peak ${f.peakPerSecond} (busiest second), mean ${fmt(f.meanPerSecond)} (first due -> last fired, ${fmt(f.firingSpanSeconds, 1)} s); last run completed ${fmt(f.completionSpanSeconds, 1)} s after the first due instant`,
      `  lateness ms, all: p50 ${ms(f.overall.p50)}, p99 ${ms(f.overall.p99)}, max ${ms(f.overall.max)}`,
      big ? `  lateness ms, ${big.slug} (${big.timers} waits): p50 ${ms(big.p50)}, p99 ${ms(big.p99)}, max ${ms(big.max)}` : "",
      small.length
        ? `  lateness ms, the other ${small.length} (${Math.min(...small.map((o) => o.timers))}-${Math.max(...small.map((o) => o.timers))} waits each): p50 of p50s ${ms(small.map((o) => o.p50).sort((a, b) => a - b)[Math.floor(small.length / 2)])}, ` +
          `p99 min/median/max ${ms(smallP99[0])}/${ms(smallP99[Math.floor(smallP99.length / 2)])}/${ms(smallP99.at(-1))}, max ${ms(Math.max(...small.map((o) => o.max)))}`
        : "",
      `  fairness: Jain's index over the organisations' p99 lateness ${fmt(jain(p99s), 3)}; highest p99 / lowest p99 ${fmt(Math.max(...p99s) / Math.max(1, Math.min(...p99s)), 1)}x (target within 2x)`,
      `  CPU ms per timer: node ${cpu(nodeCpu)}; postgres ${cpu(pgCpu)}`,
      targets(f, nodeCpu, pgCpu, c),
    ]
      .filter(Boolean)
      .join("\n"),
  );
}

/**
 * The figures the spike's targets are judged on, read once for the printed line and the targets table: the CPU of a
 * timer (every process's Node and PostgreSQL CPU in the window, over the timers fired), the highest organisation's
 * p99 over the lowest, and the p99 bound (3 s with the queue working, 5 s with every delayed job lost).
 */
function targetFigures(f: SpikeFigures, nodeCpu: Record<string, number>, pgCpu: Record<string, number>, c: SpikeCase) {
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  const perTimer = (s: number) => (s * 1000) / Math.max(1, f.fired);
  const p99s = f.orgs.map((o) => o.p99);
  return {
    node: perTimer(sum(nodeCpu)),
    pg: perTimer(sum(pgCpu)),
    spread: Math.max(...p99s) / Math.max(1, Math.min(...p99s)),
    bound: c.queue ? 3_000 : 5_000,
  };
}

/** The targets of a spike at one instant with their figures, beside timers fired a second. Spread cases print the figures only. */
function targets(f: SpikeFigures, nodeCpu: Record<string, number>, pgCpu: Record<string, number>, c: SpikeCase): string {
  const { node, pg, spread, bound } = targetFigures(f, nodeCpu, pgCpu, c);
  const met = (ok: boolean) => (ok ? "met" : "not met");
  const at = c.spread === 0 ? "" : " (targets are for spread 0)";
  return (
    `  timers/s ${fmt(f.meanPerSecond)} (mean), CPU a timer ${fmt(node + pg, 3)} ms (node ${fmt(node, 3)} + postgres ${fmt(pg, 3)})${at}; targets: ` +
    `p99 <= ${bound / 1000} s: ${fmt(f.overall.p99, 0)} ms ${met(f.overall.p99 <= bound)}; organisations within 2x: ${fmt(spread, 1)}x ${met(spread <= 2)}; ` +
    `CPU a timer <= 0.05 ms: ${met(node + pg <= 0.05)}`
  );
}

/** The spread-0 case's rows of the targets table: the same figures as targets() above. */
function spikeTargets(f: SpikeFigures, nodeCpu: Record<string, number>, pgCpu: Record<string, number>, c: SpikeCase, lost: number, duplicated: number): Target[] {
  const { node, pg, spread, bound } = targetFigures(f, nodeCpu, pgCpu, c);
  const queue = c.queue ? "queue working" : "every delayed job lost";
  return [
    bounded(`spike, ${c.waits} due at once, ${queue}: p99 lateness`, "<=", bound, f.overall.p99, " ms", 0, `(${fmt(f.meanPerSecond)} timers/s mean)`),
    bounded(`spike, ${queue}: highest / lowest organisation p99`, "<=", 2, spread, "x", 1),
    bounded(`spike, ${queue}: CPU a timer (node + postgres)`, "<=", 0.05, node + pg, " ms", 3),
    { what: `spike, ${queue}: lost / duplicated`, target: "0 / 0", figure: `${lost} / ${duplicated}`, met: lost === 0 && duplicated === 0 },
  ];
}
