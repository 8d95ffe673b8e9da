import { ensurePublished } from "@holdfast/cli/seed";
import { type Graph, parseGraph, startRun } from "@holdfast/core";
import { createDb, type Db } from "@holdfast/db";
import { type AppProcess, spawnApp } from "@holdfast/testkit/procs";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { counters, type DbCounters, diff, pidCpu } from "./pg";

export interface Scenario {
  label: string;
  kind: "http" | "branch";
  runs: number;
  steps: number;
  laneWorkers: number;
  /** Runs started per second (open loop); undefined = as fast as the starters go (closed loop, peak). */
  rate?: number;
  /** No Redis wake-ups: workers poll the database, the sweeper re-wakes. */
  sweepOnly?: boolean;
  profileDir?: string;
}

export interface Result {
  label: string;
  runs: number;
  steps: number;
  seconds: number;
  runsPerSec: number;
  stepsPerSec: number;
  latencyMs: { p50: number; p95: number; p99: number };
  /** A step's settle commit to the next step's claim (chained steps: the same commit, so 0 by the database clock). */
  dispatchMs: { p50: number; p99: number } | null;
  /** The first step of each run: scheduled by the engine's walk to claimed (relay + Redis + lane worker). */
  firstDispatchMs: { p50: number; p99: number } | null;
  commitsPerStep: number;
  walBytesPerStep: number;
  nodeCpuPer1kSteps: number;
  pgCpuPer1kSteps: number;
  lost: number;
  duplicated: number;
  /** Node CPU seconds per 1,000 steps, per process. */
  cpuByApp: Record<string, number>;
}

export function chainGraph(kind: "http" | "branch", steps: number, url: string): Graph {
  const ids = Array.from({ length: steps }, (_, i) => `s${i + 1}`);
  const nodes =
    kind === "http"
      ? ids.map((id) => ({ id, kind: "http_request", config: { url, method: "POST", body: {} } }))
      : ids.map((id) => ({ id, kind: "branch", config: { condition: { path: "input.n", op: "exists" } } }));
  const edges =
    kind === "http"
      ? ["t", ...ids].map((from, i) => ({ from, to: ids[i] ?? "e" }))
      : ["t", ...ids].flatMap((from, i) =>
          from === "t" ? [{ from, to: ids[0] as string }] : [{ from, to: ids[i] ?? "e", label: "true" }, { from, to: "e", label: "false" }],
        );
  return parseGraph({ nodes: [{ id: "t", kind: "trigger", config: { eventIdField: "id" } }, ...nodes, { id: "e", kind: "end" }], edges });
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

const benchKey = process.env.HOLDFAST_SECRET_KEY || randomBytes(32).toString("hex");

export async function runHoldfast(s: Scenario, env: { url: string; dbName: string; redisPrefix: string; noopUrl: string }): Promise<Result> {
  const db: Db = createDb(env.url, { poolSize: 6, applicationName: "holdfast-bench" });
  const slug = `${s.kind}-${s.steps}-${Math.random().toString(36).slice(2, 8)}`;
  await ensurePublished(db, {
    orgSlug: "bench",
    orgName: "Bench",
    automationSlug: slug,
    automationName: slug,
    graph: chainGraph(s.kind, s.steps, env.noopUrl),
  });
  const common: Record<string, string> = {
    DATABASE_URL: env.url,
    QUEUE_PREFIX: env.redisPrefix,
    LOG_LEVEL: "info",
    DB_POOL_SIZE: "10",
    // The no-op target listens on loopback, which the egress guard refuses unless it is named.
    HOLDFAST_EGRESS_ALLOW: new URL(env.noopUrl).host,
    // Every run's database is new, so any key will do: the deployment's own (if set) or one made for this run.
    HOLDFAST_SECRET_KEY: benchKey,
    ...(s.sweepOnly ? { WAKEUPS: "poll", POLL_INTERVAL_MS: "100" } : {}),
  };
  const prof = (name: string) =>
    s.profileDir ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${s.profileDir}/${name}`] } : {};
  const apps: AppProcess[] = [
    ...(s.sweepOnly ? [] : [spawnApp("relay", { env: common, ...prof("relay") })]),
    spawnApp("engine", { env: { ...common, ENGINE_CONCURRENCY: "16" }, ...prof("engine") }),
    spawnApp("sweeper", { env: { ...common, SWEEP_INTERVAL_MS: "1000" } }),
    ...Array.from({ length: s.laneWorkers }, (_, i) =>
      spawnApp("lane-worker", { env: { ...common, LANE: "io", LANE_CONCURRENCY: String(Math.max(4, Math.floor(32 / s.laneWorkers))) }, label: `lane-io-${i}`, ...prof(`lane-io-${i}`) }),
    ),
  ];
  await Promise.all(apps.map((a) => a.waitForOutput(/ready/, 30_000)));
  await new Promise((r) => setTimeout(r, 500));
  const cpuBefore = apps.map((a) => pidCpu(a.pid()));
  const before: DbCounters = await counters(env.url, env.dbName);

  const started = Date.now();
  let next = 0;
  const startOne = async (i: number) => {
    await startRun(db, {
      orgSlug: "bench",
      automationSlug: slug,
      rawBody: "{}",
      body: { id: `r${i}`, n: i },
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
      via: "bench",
      auth: { kind: "operator" },
    });
  };
  if (s.rate) {
    const interval = 1000 / s.rate;
    const pending: Promise<void>[] = [];
    for (let i = 0; i < s.runs; i++) {
      const due = started + i * interval;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(startOne(i));
    }
    await Promise.all(pending);
  } else {
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < s.runs) await startOne(next++);
      }),
    );
  }
  const sql = new pg.Client({ connectionString: env.url });
  await sql.connect();
  const deadline = Date.now() + 3 * 60_000;
  for (;;) {
    const { rows } = await sql.query(
      "SELECT count(*) FILTER (WHERE r.status <> 'running')::int AS done, count(*)::int AS n FROM runs r JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1",
      [slug],
    );
    if (rows[0].done >= s.runs) break;
    const dead = apps.find((a) => a.exits.length > 0);
    if (dead) throw new Error(`${s.label}: ${dead.name} exited\n${dead.output().slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`${s.label}: only ${rows[0].done}/${s.runs} runs finished`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1200)); // let backends flush their statistics
  const after = await counters(env.url, env.dbName);
  const cpuAfter = apps.map((a) => pidCpu(a.pid()));
  await Promise.all(apps.map((a) => a.stop()));

  const window = await sql.query(
    `SELECT EXTRACT(EPOCH FROM max(r.finished_at) - min(r.created_at))::float8 AS secs,
            count(*) FILTER (WHERE r.status = 'completed')::int AS completed,
            array_agg(EXTRACT(EPOCH FROM r.finished_at - r.created_at) * 1000 ORDER BY r.finished_at - r.created_at) AS lat
     FROM runs r JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1`,
    [slug],
  );
  const { secs, completed } = window.rows[0];
  const lat = (window.rows[0].lat as number[]).map(Number);
  const stepCheck = await sql.query(
    `SELECT count(*)::int AS steps,
            count(*) FILTER (WHERE s.status = 'done')::int AS done,
            (SELECT count(*)::int FROM run_events e JOIN runs r2 ON r2.id = e.run_id JOIN automations a2 ON a2.id = r2.automation_id
              WHERE a2.slug = $1 AND e.type = 'step.succeeded') AS settles
     FROM steps s JOIN runs r ON r.id = s.run_id JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1`,
    [slug],
  );
  let dispatch: number[] = [];
  let firstDispatch: number[] = [];
  if (s.kind === "http") {
    const d = await sql.query(
      `WITH ev AS (
         SELECT e.run_id, e.type, e.at, lag(e.type) OVER w AS prev_type, lag(e.at) OVER w AS prev_at
         FROM run_events e JOIN runs r ON r.id = e.run_id JOIN automations a ON a.id = r.automation_id
         WHERE a.slug = $1 AND e.type IN ('step.succeeded', 'step.claimed')
         WINDOW w AS (PARTITION BY e.run_id ORDER BY e.id))
       SELECT EXTRACT(EPOCH FROM at - prev_at) * 1000 AS ms FROM ev
       WHERE type = 'step.claimed' AND prev_type = 'step.succeeded' ORDER BY 1`,
      [slug],
    );
    dispatch = d.rows.map((r) => Number(r.ms));
    const f = await sql.query(
      `SELECT EXTRACT(EPOCH FROM c.at - s.at) * 1000 AS ms
       FROM run_events s JOIN run_events c ON c.step_id = s.step_id AND c.type = 'step.claimed' AND c.attempt = 1
       JOIN runs r ON r.id = s.run_id JOIN automations a ON a.id = r.automation_id
       WHERE a.slug = $1 AND s.type = 'step.scheduled' AND s.node_id = 's1' ORDER BY 1`,
      [slug],
    );
    firstDispatch = f.rows.map((r) => Number(r.ms));
  }
  await sql.end();
  await db.$disconnect();

  const expectedSteps = s.kind === "http" ? s.runs * s.steps : 0;
  const stepsDone = s.kind === "http" ? stepCheck.rows[0].done : completed * s.steps;
  const totalSteps = s.runs * s.steps;
  const d = diff(before, after);
  const nodeCpu = cpuAfter.reduce((a, b, i) => a + b - (cpuBefore[i] ?? 0), 0);
  return {
    label: s.label,
    runs: s.runs,
    steps: totalSteps,
    seconds: secs,
    runsPerSec: completed / secs,
    stepsPerSec: stepsDone / secs,
    latencyMs: { p50: quantile(lat, 0.5), p95: quantile(lat, 0.95), p99: quantile(lat, 0.99) },
    dispatchMs: dispatch.length ? { p50: quantile(dispatch, 0.5), p99: quantile(dispatch, 0.99) } : null,
    firstDispatchMs: firstDispatch.length ? { p50: quantile(firstDispatch, 0.5), p99: quantile(firstDispatch, 0.99) } : null,
    commitsPerStep: d.commits / totalSteps,
    walBytesPerStep: d.walBytes / totalSteps,
    nodeCpuPer1kSteps: (nodeCpu / totalSteps) * 1000,
    pgCpuPer1kSteps: (d.pgCpu / totalSteps) * 1000,
    cpuByApp: Object.fromEntries(apps.map((a, i) => [a.name, Number((((cpuAfter[i] ?? 0) - (cpuBefore[i] ?? 0)) / totalSteps * 1000).toFixed(2))])),
    lost: s.runs - completed + (s.kind === "http" ? expectedSteps - stepCheck.rows[0].done : 0),
    duplicated: s.kind === "http" ? stepCheck.rows[0].settles - stepCheck.rows[0].done : 0,
  };
}
