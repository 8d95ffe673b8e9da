import { createTestPrefix } from "@holdfast/testkit";
import { statfsSync } from "node:fs";
import { cpus } from "node:os";
import pg from "pg";
import { runHoldfast } from "../holdfast";
import { Meter } from "../measure/meter";
import { loadAverage } from "../measure/proc";
import { startNoop } from "../noop-client";
import { adminUrl, dropDatabase, freshDatabase } from "../pg";
import { cpuLines, fmt, raceHeader, raceRow } from "../report";
import { perStep, type RaceResult } from "../result";
import { cloneRuns, cloneTables, setTemplateAside } from "./clone";
import { countsReadLines, foldClones, setCounts, setTemplateChangesAside, timeCountsRead } from "./counts";
import { sizeLines, tableSizes } from "./sizes";

/**
 * pnpm bench --grown: the normal step benchmark (http x10, one lane worker) on an empty database, then again with
 * 100,000 / 1,000,000 / ... finished runs and their timelines present, loaded in bulk in SQL as copies of one real run
 * of the same automation (clone.ts). Prints the table and index sizes per million steps at each size, and the
 * grown / empty ratios of steps/s and of p99s. The empty row is measured again at the end on a fresh database, so
 * the ratios carry the machine's drift between the two. Optionally a last row with the timeline retention deleting
 * beside the load (clones older than the retention are its backlog).
 */
export interface GrownOptions {
  quick: boolean;
  /** Finished runs present for each grown row, ascending; a size given twice measures the same data again. */
  sizes: number[];
  runs: number;
  inFlight: number;
  /**
   * A last row with RUN_EVENTS_RETENTION_DAYS at this many days (at 14, about half the clones are older; when a size
   * was skipped for want of disk, the clones loaded are the oldest ones, so more of them are).
   */
  retentionDays?: number | undefined;
}

const steps = 10;
/** Clones are spread back over 29 days: inside the default 30-day retention, so none is its backlog. */
const spanSeconds = 29 * 86_400;
const outboxKeepSeconds = 86_400;
const batchRuns = 10_000;
const dataDir = "/var/lib/postgresql";

function freeBytes(): number | null {
  try {
    const s = statfsSync(dataDir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

async function checkpoint(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query("CHECKPOINT");
  await admin.end();
}

export async function runGrown(o: GrownOptions): Promise<boolean> {
  const began = Date.now();
  const dbName = "holdfast_bench_grown";
  const url = await freshDatabase(dbName);
  const noop = await startNoop();
  const meter = await Meter.open();
  const keys = createTestPrefix();
  const env = { url, dbName, redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", redisPrefix: keys.prefix, noop, meter };
  const sql = new pg.Client({ connectionString: url, application_name: "holdfast-bench-grown-loader" });
  await sql.connect();
  const maxClones = Math.max(...o.sizes);
  const spacing = spanSeconds / maxClones;
  console.log(
    `holdfast bench --grown ${new Date().toISOString()}: ${cpus().length} cores, load average ${fmt(loadAverage(), 2)}; ` +
      `http x${steps}, ${o.runs} runs per row, ${o.inFlight} in flight, 1 lane worker; finished runs present: 0, ${o.sizes.map((s) => fmt(s)).join(", ")}`,
  );
  const results: RaceResult[] = [];
  // A grown row's tables were analyzed after loading (VACUUM ANALYZE below): its window runs no stand-in ANALYZE, which
  // on tens of GB read a sample of every table beside the row (the empty rows' fresh tables still get theirs).
  const row = async (label: string, e = env, analyzed = false) => {
    // Every row starts from a checkpoint: no dirty pages left by the load for the row's backends to write out, and
    // each row pays the same first-touch full-page images (the server-wide cost of a checkpoint is at most
    // shared_buffers written, the load having been checkpointed as it went).
    await checkpoint();
    const r = await runHoldfast({ label, step: "http", runs: o.runs, steps, inFlight: o.inFlight, laneWorkers: 1, analyzed }, e);
    results.push(r);
    console.log(raceRow(r));
    return r;
  };
  console.log(raceHeader());
  const empty = await row("0 finished runs (empty)");

  const [template] = (await sql.query<{ id: string }>("SELECT id FROM runs WHERE status = 'completed' ORDER BY finished_at DESC LIMIT 1")).rows;
  if (!template) throw new Error("the empty row completed no run to copy");
  const perRun = await setTemplateAside(sql, template.id);
  const changesPerRun = await setTemplateChangesAside(sql, template.id);
  console.log(
    `\n  each clone copies run ${template.id}: ${cloneTables.map((t) => `${perRun[t]} ${t}`).join(", ")} (outbox rows only for clones under a day old); ` +
      "the empty row's runs are truncated first, so the clones fill empty indexes in time order; " +
      `their ${changesPerRun} journey count changes each are added to journey_counts as the fold leaves them`,
  );

  let loaded = 0;
  let bytesPerClone = 0;
  const grown: { size: number; result: RaceResult }[] = [];
  for (const size of o.sizes) {
    const free = freeBytes();
    const need = bytesPerClone * (size - loaded);
    if (bytesPerClone && free !== null && need > 0.6 * free) {
      console.log(`\n  ${fmt(size)} finished runs skipped: about ${fmt(need / 1e9, 1)} GB more needed, ${fmt(free / 1e9, 1)} GB free on ${dataDir} (at most 60% is used)`);
      break;
    }
    const t0 = Date.now();
    const before = (await tableSizes(sql)).reduce((a, s) => a + s.tableBytes + s.indexBytes, 0);
    while (loaded < size) {
      const to = Math.min(size, loaded + batchRuns);
      const spec = { templateRunId: template.id, from: loaded + 1, to, largest: maxClones, baseSeconds: 3_600, spacingSeconds: spacing, outboxKeepSeconds };
      await cloneRuns(sql, spec);
      await foldClones(sql, spec);
      loaded = to;
      if (loaded % (batchRuns * 10) === 0 || loaded === size) {
        const secs = (Date.now() - t0) / 1000;
        console.log(`  loaded ${fmt(loaded)} finished runs (${fmt((loaded - (grown.at(-1)?.size ?? 0)) / secs)} runs/s, ${fmt(secs)} s)`);
      }
    }
    const loadSecs = (Date.now() - t0) / 1000;
    const v0 = Date.now();
    // Autovacuum may be off (it is on the bench machine): the statistics and visibility a live database would have.
    for (const t of [...cloneTables, "journey_counts"]) await sql.query(`VACUUM (ANALYZE) ${t}`);
    const sizes = await tableSizes(sql);
    const total = sizes.reduce((a, s) => a + s.tableBytes + s.indexBytes, 0);
    const added = size - (grown.at(-1)?.size ?? 0);
    // A size given twice (`--sizes 1000000,1000000`) measures the same data again, e.g. under another memory cap
    // (bench/memory-cap.sh): nothing is loaded for it.
    if (added > 0) bytesPerClone = (total - before) / added;
    const stepRows = sizes.find((s) => s.table === "steps")?.rows ?? 0;
    console.log(`\n  ${fmt(size)} finished runs: loaded in ${fmt(loadSecs)} s, VACUUM ANALYZE ${fmt((Date.now() - v0) / 1000)} s; sizes:`);
    for (const line of sizeLines(sizes, stepRows)) console.log(`  ${line}`);
    console.log(raceHeader());
    const again = grown.some((g) => g.size === size) ? ", again" : "";
    grown.push({ size, result: await row(`${fmt(size)} finished runs${again}`, env, true) });
    // The canvas's read after the row: the clones' counts folded, the row's own changes partly not yet.
    for (const line of countsReadLines(size, await timeCountsRead(url, sql, template.id, o.quick ? 50 : 300))) console.log(line);
    const left = o.sizes.filter((s) => s > size);
    if (left.length) {
      const next = (left.at(-1) as number) - size;
      console.log(
        `  to reach ${fmt(left.at(-1))}: about ${fmt((next * loadSecs) / (size - (grown.at(-2)?.size ?? 0)) / 60)} min of loading and ${fmt((next * bytesPerClone) / 1e9, 1)} GB more`,
      );
    }
  }

  const counted = grown.length ? await countsCost(o, row, sql) : undefined;

  let retention: { result: RaceResult; deleted: number } | undefined;
  if (o.retentionDays !== undefined && grown.length) {
    const deletedSoFar = async () => Number((await sql.query("SELECT n_tup_del FROM pg_stat_user_tables WHERE relname = 'run_events'")).rows[0]?.n_tup_del ?? 0);
    const d0 = await deletedSoFar();
    process.env.RUN_EVENTS_RETENTION_DAYS = String(o.retentionDays);
    try {
      console.log(raceHeader());
      const result = await row(`${fmt(loaded)} finished runs, retention ${o.retentionDays} d deleting`, env, true);
      retention = { result, deleted: (await deletedSoFar()) - d0 };
    } finally {
      delete process.env.RUN_EVENTS_RETENTION_DAYS;
    }
  }
  await sql.end();
  await dropDatabase(dbName).catch(() => {});

  // The empty row again, on a fresh database: the machine's drift over the grown rows.
  const againName = "holdfast_bench_grown_empty";
  const againUrl = await freshDatabase(againName);
  console.log(raceHeader());
  const again = await row("0 finished runs (empty, again)", { ...env, url: againUrl, dbName: againName });
  await dropDatabase(againName).catch(() => {});

  console.log("\nCPU ms per step by process:");
  for (const line of cpuLines(results)) console.log(line);
  const base = (f: (r: RaceResult) => number) => (f(empty) + f(again)) / 2;
  const ratio = (r: RaceResult, f: (r: RaceResult) => number) => fmt(f(r) / base(f), 2);
  const sps = (r: RaceResult) => r.stepsPerSec;
  const runP99 = (r: RaceResult) => r.latencyMs.p99;
  const firstP99 = (r: RaceResult) => r.firstDispatchMs?.p99 ?? Number.NaN;
  console.log(
    `\nGrown / empty, same run (empty = mean of the two empty rows: ${fmt(empty.stepsPerSec)} and ${fmt(again.stepsPerSec)} steps/s, ` +
      `${fmt((100 * Math.abs(empty.stepsPerSec - again.stepsPerSec)) / base(sps), 0)}% apart):`,
  );
  for (const { size, result } of grown) {
    console.log(
      `  ${result.label.padStart(24)}: steps/s ${ratio(result, sps)}x, run p99 ${ratio(result, runP99)}x, first-step p99 ${ratio(result, firstP99)}x` +
        (size >= 5_000_000 ? ` (target: steps/s within 20%: ${result.stepsPerSec / base(sps) >= 0.8 ? "met" : "not met"})` : ""),
    );
  }
  if (retention) {
    console.log(
      `  with the retention deleting alongside: steps/s ${ratio(retention.result, sps)}x, run p99 ${ratio(retention.result, runP99)}x; ` +
        `${fmt(retention.deleted)} timeline rows deleted in ${fmt(retention.result.seconds, 1)} s (${fmt(retention.deleted / retention.result.seconds)} rows/s)`,
    );
  }
  if (counted) for (const line of counted) console.log(line);
  const lost = results.reduce((a, r) => a + r.lost, 0);
  const dup = results.reduce((a, r) => a + r.duplicated, 0);
  console.log(`lost steps: ${lost}, duplicated steps: ${dup}`);
  console.log(`bench --grown took ${fmt((Date.now() - began) / 1000)} s; load average now ${fmt(loadAverage(), 2)}`);
  noop.stop();
  await meter.close();
  await keys.clear();
  return lost === 0 && dup === 0;
}

/**
 * The settle's cost with the journey counts against without them, same run, on the grown database: rows with the
 * counts on and off in turn (off: setCounts), each pair in the same minutes so the machine's drift falls on both.
 */
async function countsCost(o: GrownOptions, row: (label: string, e?: never, analyzed?: boolean) => Promise<RaceResult>, sql: pg.Client): Promise<string[]> {
  const on: RaceResult[] = [];
  const off: RaceResult[] = [];
  console.log(raceHeader());
  for (let round = 0; round < (o.quick ? 1 : 2); round++) {
    on.push(await row("journey counts on", undefined, true));
    await setCounts(sql, false);
    try {
      off.push(await row("journey counts off", undefined, true));
    } finally {
      await setCounts(sql, true);
    }
  }
  const mean = (rs: RaceResult[], f: (r: RaceResult) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  const pgUs = (r: RaceResult) => perStep(r).pgMs * 1000;
  const wal = (r: RaceResult) => perStep(r).walBytes;
  const sps = (r: RaceResult) => r.stepsPerSec;
  return [
    `\nJourney counts' cost on the settle, same run (${on.length} rows each way, on and off in turn):`,
    `  steps/s: ${fmt(mean(on, sps))} on, ${fmt(mean(off, sps))} off (${fmt(mean(on, sps) / mean(off, sps), 2)}x)`,
    `  database CPU per step: ${fmt(mean(on, pgUs))} µs on, ${fmt(mean(off, pgUs))} µs off (${fmt(mean(on, pgUs) / mean(off, pgUs), 2)}x, +${fmt(mean(on, pgUs) - mean(off, pgUs))} µs)`,
    `  WAL per step: ${fmt(mean(on, wal))} bytes on, ${fmt(mean(off, wal))} bytes off (${fmt(mean(on, wal) / mean(off, wal), 2)}x, +${fmt(mean(on, wal) - mean(off, wal))} bytes)`,
  ];
}
