// pnpm bench [--quick] [--runs N] [--in-flight N] [--rounds N] [--row-warmup N] [--profile DIR] [--skip-peers] [--only ROWS] [--half-rate R]: the race, Holdfast beside DBOS
// Transact and graphile-worker doing the same work per step, and the database's limit, all in this one run.
// pnpm bench --spike [--quick] [--waits N] [--spreads 0,600] [--queue working|lost]: the 09:00 spike (spike/main.ts).
// pnpm bench --grown [--quick] [--sizes 100000,1000000] [--retention-days 14]: cost as data grows (grown/main.ts).
// pnpm bench --intake [--quick]: intake through the real route, the web's trigger route beside a bare node:http server (intake/main.ts).
// pnpm bench --all [--quick]: the race, then the spike, then cost as data grows, then intake, every figure in one run.
// See docs/performance.md.
import { createTestPrefix } from "@holdfast/testkit";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { runHoldfast } from "./holdfast";
import { measureLimit } from "./limit";
import { type LimitRow, limitShare, raceTargets } from "./race-targets";
import { type Target, targetLines } from "./targets";
import { Meter } from "./measure/meter";
import { loadAverage } from "./measure/proc";
import { startNoop } from "./noop-client";
import { runPeer } from "./peers/run";
import { warmupSettleMs } from "./peers/warmup";
import { dropDatabase, freshDatabase, setting } from "./pg";
import { cpuLines, fmt, medianBy, raceHeader, raceRow, ratioLines } from "./report";
import { perStep, type RaceResult } from "./result";
import { runGrown } from "./grown/main";
import { runIntake } from "./intake/main";
import { walByRelationLines } from "./wal-report";
import { runSpike } from "./spike/main";
import { measureStarts, type StartsRow } from "./starts";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    runs: { type: "string" },
    "in-flight": { type: "string" },
    profile: { type: "string" },
    "skip-peers": { type: "boolean", default: false },
    only: { type: "string" },
    spike: { type: "boolean", default: false },
    waits: { type: "string" },
    spreads: { type: "string" },
    orgs: { type: "string" },
    grown: { type: "boolean", default: false },
    sizes: { type: "string" },
    "retention-days": { type: "string" },
    all: { type: "boolean", default: false },
    intake: { type: "boolean", default: false },
    queue: { type: "string" },
    rounds: { type: "string" },
    "half-rate": { type: "string" },
    "row-warmup": { type: "string" },
  },
});
const quick = values.quick;

// A part run alone prints its own rows of the targets table at its end.
const alone: Target[] = [];
if (values.spike && !values.all) {
  const ok = await runSpike({
    quick,
    waits: values.waits ? Number(values.waits) : undefined,
    spreads: values.spreads ? values.spreads.split(",").map(Number) : undefined,
    orgs: values.orgs ? Number(values.orgs) : undefined,
    queue: values.queue === "working" || values.queue === "lost" ? values.queue : undefined,
    targets: alone,
  });
  console.log(`\n${targetLines(alone, "targets, this run").join("\n")}`);
  process.exit(ok ? 0 : 1);
}

if (values.intake && !values.all) {
  const ok = await runIntake({ quick, targets: alone });
  console.log(`\n${targetLines(alone, "targets, this run").join("\n")}`);
  process.exit(ok ? 0 : 1);
}

if (values.grown && !values.all) {
  const ok = await runGrown({
    quick,
    sizes: (values.sizes ?? (quick ? "2000" : "100000,1000000")).split(",").map(Number),
    runs: Number(values.runs ?? (quick ? 40 : 500)),
    inFlight: Number(values["in-flight"] ?? 32),
    retentionDays: values["retention-days"] ? Number(values["retention-days"]) : undefined,
  });
  process.exit(ok ? 0 : 1);
}

const runs = Number(values.runs ?? (quick ? 40 : 500));
const inFlight = Number(values["in-flight"] ?? 32);
const rounds = Number(values.rounds ?? (quick ? 1 : 3));
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`--rounds takes a whole number from 1 (got "${values.rounds}")`);
  process.exit(2);
}
const steps = 10;
// Every closed-loop row, Holdfast's and the peers', starts with a warm-up of its own (runs/5, 5 with --quick; --row-warmup
// N, 0 for none) in the processes it measures, before its window (HoldfastScenario.warmupRuns, peers/protocol.ts).
const rowWarmup = values["row-warmup"] !== undefined ? Number(values["row-warmup"]) : quick ? 5 : Math.max(20, Math.round(runs / 5));
if (!Number.isInteger(rowWarmup) || rowWarmup < 0) {
  console.error(`--row-warmup takes a whole number from 0 (got "${values["row-warmup"]}")`);
  process.exit(2);
}
const benchStart = Date.now();
const dbName = process.env.BENCH_DATABASE ?? "holdfast_bench";
const url = await freshDatabase(dbName);
const noop = await startNoop();
const meter = await Meter.open();
// The caller's Redis key prefix (the CI test clears its own), else one of the bench's, removed at the end.
const keys = process.env.BENCH_REDIS_PREFIX ? null : createTestPrefix();
// The apps it spawns take REDIS_URL from this environment (their default otherwise), and so does its starter.
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const env = { url, dbName, redisUrl, redisPrefix: process.env.BENCH_REDIS_PREFIX ?? (keys as { prefix: string }).prefix, noop, meter };
console.log(
  `holdfast bench ${new Date().toISOString()}: ${cpus().length} cores, load average ${fmt(loadAverage(), 2)}, ` +
    `PostgreSQL synchronous_commit=${await setting(url, "synchronous_commit")}; ${runs} runs of ${steps} steps per row, ` +
    `${inFlight} runs in flight${quick ? " (quick)" : ""}; every closed-loop row's processes first run ${rowWarmup} runs, not measured\n` +
    "  (a) http: every step the same HTTP POST to a no-op server in its own process (Holdfast: http_request through the effect ledger)\n" +
    "  (b) noop: every step a durable step with no outside call (Holdfast: the bench_noop step kind on the io lane)\n",
);
console.log(raceHeader());
const results: RaceResult[] = [];
const failed: string[] = [];
/** A row that fails (a process died, the server refused a connection on a shared machine) is said and counted; the rest go on. */
// --only "graphile noop,Holdfast http": just the rows whose names contain one of these (e.g. one that failed).
const only = values.only?.split(",").map((o) => o.trim().toLowerCase());
const show = async (label: string, row: () => Promise<RaceResult>, round?: number) => {
  if (only && !only.some((o) => label.toLowerCase().includes(o))) return;
  try {
    const r = await row();
    if (round !== undefined) {
      r.round = round;
      if (rounds > 1) r.label += ` (round ${round})`;
    }
    results.push(r);
    console.log(raceRow(r));
  } catch (error) {
    failed.push(label);
    const [first, ...rest] = ((error as Error).message ?? String(error)).split("\n");
    console.log(`${label.padEnd(38)} FAILED: ${first}`);
    // What the process said last (a waiter's error carries its output's tail): the cause, in CI's log too.
    const tail = rest.filter((l) => l.trim() !== "").slice(-20);
    if (tail.length > 0) console.log(tail.map((l) => `    | ${l}`).join("\n"));
  }
};

const profile = values.profile ? { profileDir: values.profile } : {};
// Every row on a fresh database, as each peer row is (peers/run.ts): no row inherits the tables, statistics or cached
// plans of the one before it, and each gets the meter's one ANALYZE at the same point of its row.
const rowWarmupSettleMs = warmupSettleMs(quick);
const holdfastRow = async (spec: Parameters<typeof runHoldfast>[0], rowEnv: typeof env) => {
  await freshDatabase(dbName);
  return runHoldfast(spec.rate ? spec : { warmupRuns: rowWarmup, warmupSettleMs: rowWarmupSettleMs, ...spec }, rowEnv);
};
const peerRow = (system: "dbos" | "graphile", spec: { step: "http" | "noop"; runs: number; steps: number; inFlight: number; warmupRuns?: number }) =>
  runPeer(system, { warmupRuns: rowWarmup, warmupSettleMs: rowWarmupSettleMs, ...spec }, env);
const peers = values["skip-peers"] ? [] : (["dbos", "graphile"] as const);
// The main rows in rounds (3 unless --quick or --rounds): on a shared machine whose speed drifts by a quarter within
// minutes, one row of each system says as much about the moment as about the system. Each round starts with another
// system, so none always runs first; the ratios are taken within a round and the median round's is the figure.
const systems = ["holdfast", ...peers] as const;
const limits: LimitRow[] = [];
// Before the rounds, every system runs a short row of each step once, not measured: the first row of a bench run
// otherwise pays for cold file caches, Node's first compiles and the database's first plans (round 1's first row ran
// at two thirds of its later rounds' rate), and only the system that happens to go first would.
if (!quick && !only) {
  const warm = Math.max(20, Math.round(runs / 10));
  const began = Date.now();
  for (const step of ["http", "noop"] as const) {
    for (const system of systems) {
      // Itself a warm-up: none of its own.
      const row = system === "holdfast" ? holdfastRow({ label: "warm-up", step, runs: warm, steps, inFlight, laneWorkers: 1, warmupRuns: 0 }, env) : peerRow(system, { step, runs: warm, steps, inFlight, warmupRuns: 0 });
      await row.catch((error: Error) => console.log(`warm-up ${system} ${step} failed (the rounds go on): ${error.message.split("\n")[0]}`));
    }
  }
  console.log(`warm-up: each system ${warm} runs of each step, not measured (${fmt((Date.now() - began) / 1000)} s)`);
}
for (const step of ["http", "noop"] as const) {
  for (let round = 1; round <= rounds; round++) {
    const shift = (round - 1) % systems.length;
    for (const system of [...systems.slice(shift), ...systems.slice(0, shift)]) {
      if (system === "holdfast") {
        await show(
          `Holdfast ${step}`,
          () => holdfastRow({ label: `Holdfast ${step} x${steps}`, step, runs, steps, inFlight, laneWorkers: 1, ...(step === "http" && round === 1 ? profile : {}) }, env),
          round,
        );
      } else {
        await show(`${system} ${step}`, () => peerRow(system, { step, runs, steps, inFlight }), round);
      }
    }
    // The database's limit at the end of each http round (after every system's row, so none runs just after its
    // burst of writes), Holdfast's share of it taken within the round like the ratios.
    if (step === "http" && !quick && (!only || only.some((o) => "database limit".includes(o)))) {
      // Both limits: one commit a step, and the writes of 32 steps in one commit (a settle batch's group commit).
      for (const batch of [1, 32]) {
        const l = await measureLimit(meter, url, dbName, 10, 8, true, batch).catch((error) => {
          failed.push(`database limit${batch > 1 ? `, ${batch} steps a commit` : ""} (round ${round})`);
          console.log(`database limit, ${batch} a commit (round ${round}) FAILED: ${(error as Error).message.split("\n")[0]}`);
          return undefined;
        });
        if (l) limits.push({ ...l, round, batch });
      }
    }
  }
}
/** A system's main row of the median round by steps/s (the one the other figures are read from). */
const mainRow = (system: RaceResult["system"], scenario: RaceResult["scenario"]) =>
  medianBy(
    results.filter((r) => r.system === system && r.scenario === scenario && r.round !== undefined),
    (r) => r.stepsPerSec,
  );
if (!quick) {
  // The same peak rows with every settle its own commit (before group commit), side by side.
  for (const step of ["http", "noop"] as const) {
    await show(`Holdfast ${step}, settles alone`, () =>
      holdfastRow({ label: `Holdfast ${step} x${steps}, settles alone`, step, runs, steps, inFlight, laneWorkers: 1, settlesAlone: true }, env),
    );
  }
  // The same peak row with first steps announced by the outbox trigger's NOTIFY (before queue/wake.ts), side by side.
  await show("Holdfast http, starts NOTIFY", () =>
    holdfastRow({ label: `Holdfast http x${steps}, starts NOTIFY`, step: "http", runs, steps, inFlight, laneWorkers: 1, startsNotify: true }, env),
  );
  // The same peak row with the start target read with every start (before run/start/target-cache.ts), side by side.
  await show("Holdfast http, starts read target", () =>
    holdfastRow({ label: `Holdfast http x${steps}, starts read target`, step: "http", runs, steps, inFlight, laneWorkers: 1, startsReadTarget: true }, env),
  );
  await show("Holdfast http, 2 lane workers", () => holdfastRow({ label: `Holdfast http x${steps}, 2 lane workers`, step: "http", runs, steps, inFlight, laneWorkers: 2 }, env));
  await show("Holdfast http, sweep only", () => holdfastRow({ label: `Holdfast http x${steps}, sweep only`, step: "http", runs, steps, inFlight, laneWorkers: 1, sweepOnly: true }, env));
  // --half-rate R: the open-loop rows at R runs/s instead of half the peak row's (to compare commits at one rate).
  const halfRate = values["half-rate"] ? Number(values["half-rate"]) : undefined;
  if (halfRate !== undefined && !(halfRate > 0)) {
    console.error(`--half-rate takes runs a second above 0 (got "${values["half-rate"]}")`);
    process.exit(2);
  }
  const peak = mainRow("Holdfast", "http");
  if (peak || halfRate) {
    const half = halfRate ?? Math.max(1, (peak as RaceResult).runsPerSec / 2);
    // The first 3 s of arrivals warm the freshly started processes and tables (HoldfastScenario.warmupRuns).
    const warmupRuns = Math.round(half * 3);
    await show("Holdfast http, half peak", () =>
      holdfastRow(
        { label: `Holdfast http x${steps}, half peak (${fmt(half, 1)}/s)`, step: "http", runs: Math.min(runs, Math.round(half * 20)), steps, inFlight, laneWorkers: 1, rate: half, warmupRuns },
        env,
      ),
    );
    // The same load with first steps through the relay and Redis only (before LISTEN dispatch), side by side.
    await show("Holdfast http, half peak, queue only", () =>
      holdfastRow(
        { label: `Holdfast http x${steps}, half peak, queue only`, step: "http", runs: Math.min(runs, Math.round(half * 20)), steps, inFlight, laneWorkers: 1, rate: half, warmupRuns, queueOnly: true },
        env,
      ),
    );
  }
}
// Starts alone, as a burst of deliveries: first steps told by NOTIFY against announced on Redis, alternated.
let starts: StartsRow[] = [];
if (!only || only.some((o) => "starts alone".includes(o))) {
  starts = await measureStarts({ meter, dbName, redisUrl, redisPrefix: env.redisPrefix, starts: quick ? 100 : 2_000, concurrency: 16, rounds: quick ? 1 : 4 }).catch((error) => {
    failed.push("starts alone");
    console.log(`starts alone FAILED: ${(error as Error).message.split("\n")[0]}`);
    return [];
  });
}
console.log("  * peers: the start call's return to the first step's body, process clock; Holdfast: the start's transaction (its now(): its statement and commit flush included) to the first claim, database clock");
console.log("  commit/st: every transaction of the row's database (xact_commit, read-only ones too); wrote/st: those that wrote (their commit records in its WAL)");
console.log("  WAL B/st: the records of the row's own database (pg_walinspect); srv WAL: pg_current_wal_lsn delta, every database on the server");

console.log("\nCPU ms per step by process (Node by pid; PostgreSQL backends of the scenario's database by application_name):");
for (const line of cpuLines(results)) console.log(line);

console.log("\nRatios of steps/s, same run:");
for (const line of ratioLines(results, { http: { DBOS: 2, "graphile-worker": 2.5 }, noop: { DBOS: 1.5 } })) console.log(line);

for (const scenario of ["http", "noop"] as const) {
  const peak = mainRow("Holdfast", scenario);
  if (peak) {
    const s = perStep(peak);
    console.log(
      `Holdfast commits per step at peak (${scenario}): ${fmt(s.commits, 2)}, of which wrote (a commit PostgreSQL flushes): ${fmt(s.writeCommits, 2)} (target <= 0.3)`,
    );
  }
}
// Where each system's WAL a step goes, from the main row of the median round (Holdfast's first: the issue's figure).
const walRows = (["Holdfast", "DBOS", "graphile-worker"] as const).flatMap((system) =>
  (["http", "noop"] as const).flatMap((scenario) => mainRow(system, scenario) ?? []),
);
const walLines = walByRelationLines(walRows);
if (walLines.length) {
  console.log(
    "\n(WAL a step by relation: pg_walinspect after each row's window; pg_statistic is the meter's stand-in ANALYZE; " +
      "full-page images appear only when a checkpoint fell inside the row)",
  );
  console.log(`${walLines.join("\n")}\n`);
}
for (const step of ["http", "noop"] as const) {
  const batched = mainRow("Holdfast", step);
  const alone = results.find((r) => r.label === `Holdfast ${step} x${steps}, settles alone`);
  if (!batched || !alone) continue;
  const [b, a] = [perStep(batched), perStep(alone)];
  console.log(
    `group commit (${step}), settles alone -> batched: steps/s ${fmt(alone.stepsPerSec)} -> ${fmt(batched.stepsPerSec)} (${fmt(batched.stepsPerSec / alone.stepsPerSec, 2)}x); ` +
      `commits/step ${fmt(a.commits, 2)} -> ${fmt(b.commits, 2)} (wrote ${fmt(a.writeCommits, 2)} -> ${fmt(b.writeCommits, 2)}); WAL B/step ${fmt(a.walBytes)} -> ${fmt(b.walBytes)}; ` +
      `CPU ms/step node ${fmt(a.nodeMs, 2)} -> ${fmt(b.nodeMs, 2)}, pg ${fmt(a.pgMs, 2)} -> ${fmt(b.pgMs, 2)}`,
  );
}
if (limits.length) {
  for (const l of limits) {
    console.log(
      `database limit, round ${l.round} (pgbench -M prepared, the writes of ${l.batch === 1 ? "a chained effect step in one commit" : `${l.batch} chained effect steps in one commit`}, 8 clients, 10 s): ${fmt(l.stepsPerSec)} steps/s, ` +
        `${fmt(l.commitsPerStep, 2)} commits/step, ${fmt(l.walBytesPerStep)} WAL B/step, ${fmt(l.pgCpuMsPerStep, 2)} pg ms/step (load ${fmt(l.load.start, 1)})`,
    );
  }
  for (const batch of [1, 32]) {
    const s = limitShare(results, limits, batch);
    if (!s) continue;
    console.log(
      `Holdfast http / database limit (${batch === 1 ? "one commit a step" : `${batch} steps a commit`}): ${s.rounds.length > 1 ? `median of ${s.rounds.length} rounds ` : ""}${fmt(s.share, 1)}% (target >= 60%)` +
        (s.rounds.length > 1 ? ` (rounds: ${s.rounds.map((x) => `${fmt(x.ours)}/${fmt(x.limit)} = ${fmt(x.share, 1)}%`).join(", ")})` : ""),
    );
  }
}
const halfRow = results.find((r) => r.label.includes("half peak") && !r.label.includes("queue only"));
const queueRow = results.find((r) => r.label.includes("half peak, queue only"));
if (queueRow) {
  console.log(
    `first-step dispatch at half peak through the relay and Redis only (LISTEN_DISPATCH=off): p50 ${fmt(queueRow.firstDispatchMs?.p50, 1)} ms, p99 ${fmt(queueRow.firstDispatchMs?.p99, 1)} ms`,
  );
}
if (halfRow) {
  console.log(
    `first-step dispatch at half peak (start's transaction -> first claim: the start's statement and commit flush included): ` +
      `p50 ${fmt(halfRow.firstDispatchMs?.p50, 1)} ms, p99 ${fmt(halfRow.firstDispatchMs?.p99, 1)} ms (target p99 <= 10); ` +
      `chained steps p50 ${fmt(halfRow.chainedDispatchMs?.p50, 1)}, p99 ${fmt(halfRow.chainedDispatchMs?.p99, 1)} ms (target 0)`,
  );
  console.log(
    `  the same from the start call's return (after its commit; the driver's clock against the database's, one machine): ` +
      `p50 ${fmt(halfRow.firstFromReturnMs?.p50, 1)} ms, p99 ${fmt(halfRow.firstFromReturnMs?.p99, 1)} ms; the peers' column is measured this way`,
  );
  console.log(
    halfRow.firstFromCommitMs
      ? `  the same from the start's commit (its commit time, track_commit_timestamp; database clock both): ` +
          `p50 ${fmt(halfRow.firstFromCommitMs.p50, 1)} ms, p99 ${fmt(halfRow.firstFromCommitMs.p99, 1)} ms (target p99 <= 10)`
      : halfRow.firstFromCommitMs === null
        ? "  from the start's commit exactly: the server records commit times, but none of this row's starts had one"
        : "  from the start's commit exactly: not measured (the server does not record commit times; track_commit_timestamp = on does, after a restart)",
  );
  if (halfRow.warmupRuns) {
    console.log(
      `  not counted above: the row's first ${halfRow.warmupRuns} arrivals (3 s, the processes just started), first step ` +
        `${halfRow.firstFromCommitMs ? "from the start's commit" : "from the start's transaction"}: ` +
        `p50 ${fmt(halfRow.firstWarmupMs?.p50, 1)} ms, p99 ${fmt(halfRow.firstWarmupMs?.p99, 1)} ms`,
    );
  }
}
if (starts.length) {
  const words = { notify: "told by NOTIFY, target read  ", bus: "on Redis, target read        ", kept: "on Redis, target kept        " } as const;
  for (const r of starts) {
    console.log(
      `starts alone, round ${r.round}, first steps ${words[r.how]} (${r.starts} starts, 16 at once, no worker, 2 LISTENers): ` +
        `${fmt(r.startsPerSec)} starts/s, ${fmt(r.commitsPerStart, 2)} commits/start, CPU ms/start node ${fmt(r.nodeMs, 3)}, pg ${fmt(r.pgMs, 3)} (load ${fmt(r.load, 1)})`,
    );
  }
  // Each change against the way before it, within each round.
  const change = (before: StartsRow["how"], after: StartsRow["how"], what: string) => {
    const ratios = [...new Set(starts.map((r) => r.round))].flatMap((round) => {
      const [b, a] = [before, after].map((how) => starts.find((r) => r.round === round && r.how === how));
      return b && a ? [a.startsPerSec / b.startsPerSec] : [];
    });
    const mid = medianBy(ratios, (x) => x);
    if (mid !== undefined) console.log(`starts alone, starts/s ${what}: median of ${ratios.length} rounds ${fmt(mid, 2)}x (rounds: ${ratios.map((x) => `${fmt(x, 2)}x`).join(", ")})`);
  };
  change("notify", "bus", "announced on Redis / told by NOTIFY (both reading the target)");
  change("bus", "kept", "target kept / read with every start (both on Redis)");
}
const lost = results.reduce((a, r) => a + r.lost, 0) + starts.reduce((a, r) => a + r.lost, 0);
const dup = results.reduce((a, r) => a + r.duplicated, 0);
console.log(`lost steps: ${lost}, duplicated steps: ${dup} (target 0 and 0; every system, every row)`);
if (failed.length) console.log(`rows that failed: ${failed.join(", ")}`);
console.log(`bench took ${fmt((Date.now() - benchStart) / 1000)} s; load average now ${fmt(loadAverage(), 2)}`);
noop.stop();
await meter.close();
await keys?.clear();
if (!process.env.BENCH_KEEP_DB) await dropDatabase(dbName).catch(() => {});
const targets: Target[] = raceTargets(results, limits, (scenario) => mainRow("Holdfast", scenario));
let rest = true;
if (values.all) {
  // Every figure of issue 19 in this one run: the spike and cost as data grows after the race.
  console.log("\n");
  rest = await runSpike({ quick, spreads: values.spreads ? values.spreads.split(",").map(Number) : undefined, targets });
  console.log("\n");
  rest =
    (await runGrown({
      quick,
      sizes: (values.sizes ?? (quick ? "2000" : "100000,1000000")).split(",").map(Number),
      runs: Number(values.runs ?? (quick ? 40 : 500)),
      inFlight: Number(values["in-flight"] ?? 32),
      retentionDays: values["retention-days"] ? Number(values["retention-days"]) : undefined,
    })) && rest;
  console.log("\n");
  rest = (await runIntake({ quick, targets })) && rest;
}
// The verdict last: every target this run measured, its figure and met / not met (docs/performance.md shows it first).
console.log(`\n${targetLines(targets, `targets, this run${quick ? " (quick: small rows, figures not comparable with the targets)" : ""}`).join("\n")}`);
process.exit(lost === 0 && dup === 0 && failed.length === 0 && rest ? 0 : 1);
