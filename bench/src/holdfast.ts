import { publishBenchAutomation } from "./publish";
import { type Graph, parseGraph } from "@holdfast/core/versions";
import { startRun } from "@holdfast/core/run";
import { createDb, type Db } from "@holdfast/db";
import { createWakePublisher } from "@holdfast/queue";
import { type AppProcess, spawnApp } from "@holdfast/testkit/procs";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { benchNoopKind, preloadArgs } from "./kinds/bench-noop";
import type { Meter } from "./measure/meter";
import { type FinishPoller, startFinishPoller } from "./finish-client";
import type { NoopServer } from "./noop-client";
import { type RaceResult, quantiles } from "./result";

export interface HoldfastScenario {
  label: string;
  /** http: every step an http_request to the no-op server, through the effect ledger; noop: the bench_noop kind. */
  step: "http" | "noop";
  runs: number;
  steps: number;
  /** Runs kept in flight (closed loop: a run starts when one finishes). */
  inFlight: number;
  laneWorkers: number;
  /** Open loop instead: runs started at this rate per second, whatever is in flight (the half-peak row). */
  rate?: number;
  /**
   * Open loop: this many arrivals at the same rate before the `runs` measured, run to their ends and counted in
   * lost/duplicated and the per-step figures, but not in the latencies (run, first step, chained): the freshly
   * started processes' first seconds (first plans, on tables with no statistics until the stand-in ANALYZE 2 s in) are
   * not the steady state a rate is measured at. Their first-step latency is reported apart (`firstWarmupMs`).
   * Closed loop: this many runs, `inFlight` at a time, in the same processes before the row's window opens, of an
   * automation of their own (the same graph), so nothing of theirs is in the row's figures; the peers run as many
   * (peers/protocol.ts). A freshly started process's first thousands of steps run before its compiler has optimised
   * them: the row measures the steady state, not how fast each system warms up.
   */
  warmupRuns?: number;
  /** Closed loop: the wait after the warm-up, before the window (peers/warmup.ts). */
  warmupSettleMs?: number;
  /** No Redis wake-ups: workers poll the database, the sweeper re-wakes. */
  sweepOnly?: boolean;
  /** First steps through the relay and the queue only (LISTEN_DISPATCH=off, no relay grace): the before of issue 19 item 3. */
  queueOnly?: boolean;
  /** Starts announce first steps by the outbox trigger's NOTIFY, not on Redis (the before of queue/wake.ts). */
  startsNotify?: boolean;
  /** Every start reads its trigger URL's start target (the before of run/start/target-cache.ts). */
  startsReadTarget?: boolean;
  /** Every settle its own statement and commit (SETTLE_BATCH_MAX=1): the before of issue 19 item 2 (group commit). */
  settlesAlone?: boolean;
  profileDir?: string;
  /** The database's tables were analyzed after they were loaded (cost as data grows): no stand-in ANALYZE in the row. */
  analyzed?: boolean;
}

export interface HoldfastEnv {
  url: string;
  redisUrl: string;
  dbName: string;
  redisPrefix: string;
  noop: NoopServer;
  meter: Meter;
}

export function chainGraph(step: "http" | "noop", steps: number, url: string): Graph {
  const ids = Array.from({ length: steps }, (_, i) => `s${i + 1}`);
  const nodes = ids.map((id) =>
    step === "http" ? { id, kind: "http_request", config: { url, method: "POST", body: {} } } : { id, kind: benchNoopKind, config: {} },
  );
  const edges = ["t", ...ids].map((from, i) => ({ from, to: ids[i] ?? "e" }));
  return parseGraph({ nodes: [{ id: "t", kind: "trigger", config: { eventIdField: "id" } }, ...nodes, { id: "e", kind: "end" }], edges });
}

export const benchKey = process.env.HOLDFAST_SECRET_KEY || randomBytes(32).toString("hex");

/** The processes `pnpm start` runs for these steps (no web: the bench starts runs through startRun, as the webhook does). */
function spawnApps(s: HoldfastScenario, env: HoldfastEnv): AppProcess[] {
  const common: Record<string, string> = {
    DATABASE_URL: env.url,
    QUEUE_PREFIX: env.redisPrefix,
    LOG_LEVEL: "info",
    DB_POOL_SIZE: "10",
    // The no-op target listens on loopback, which the egress guard refuses unless it is named.
    HOLDFAST_EGRESS_ALLOW: new URL(env.noop.url).host,
    // Every run's database is new, so any key will do: the deployment's own (if set) or one made for this run.
    HOLDFAST_SECRET_KEY: benchKey,
    ...(s.sweepOnly ? { WAKEUPS: "poll", POLL_INTERVAL_MS: "100" } : {}),
    ...(s.queueOnly ? { LISTEN_DISPATCH: "off", RELAY_STEP_READY_GRACE_MS: "0" } : {}),
    ...(s.settlesAlone ? { SETTLE_BATCH_MAX: "1" } : {}),
  };
  // Every app loads the bench's step kind, so any of them can parse the graph and the lane workers can perform it.
  const args = (name: string) => ({ nodeArgs: [...preloadArgs, ...(s.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${s.profileDir}/${name}`] : [])] });
  const slots = String(Math.max(4, Math.floor(32 / s.laneWorkers)));
  return [
    ...(s.sweepOnly ? [] : [spawnApp("relay", { env: common, ...args("relay") })]),
    spawnApp("engine", { env: { ...common, ENGINE_CONCURRENCY: "16" }, ...args("engine") }),
    spawnApp("sweeper", { env: { ...common, SWEEP_INTERVAL_MS: "1000" }, ...args("sweeper") }),
    ...Array.from({ length: s.laneWorkers }, (_, i) =>
      spawnApp("lane-worker", { env: { ...common, LANE: "io", LANE_CONCURRENCY: slots }, label: `lane-io-${i}`, ...args(`lane-io-${i}`) }),
    ),
  ];
}

export async function runHoldfast(s: HoldfastScenario, env: HoldfastEnv): Promise<RaceResult> {
  const db: Db = createDb(env.url, { poolSize: 8, applicationName: "holdfast-start" });
  const slug = `${s.step}-${s.steps}-${Math.random().toString(36).slice(2, 8)}`;
  const graph = chainGraph(s.step, s.steps, env.noop.url);
  await publishBenchAutomation(db, { orgSlug: "bench", orgName: "Bench", automationSlug: slug, automationName: slug, graph });
  const closedWarmup = s.rate ? 0 : (s.warmupRuns ?? 0);
  const warmSlug = `${slug}-warm`;
  if (closedWarmup > 0) await publishBenchAutomation(db, { orgSlug: "bench", orgName: "Bench", automationSlug: warmSlug, automationName: warmSlug, graph });
  const apps = spawnApps(s, env);
  // The webhook route's way of telling lane workers of first steps (apps/web/src/server/db.ts wakePublisher).
  const wake = s.sweepOnly || s.startsNotify ? undefined : createWakePublisher({ redis: env.redisUrl, prefix: env.redisPrefix });
  let poller: FinishPoller | undefined;
  try {
    if (wake && !(await wake.whenConnected(10_000))) throw new Error(`${s.label}: Redis did not answer`);
    return await measureRow();
  } catch (error) {
    // A failed row leaves nothing running into the next one (whose database is made again under the same name).
    poller?.kill();
    await Promise.all(apps.map((a) => a.stop()));
    await db.$disconnect().catch(() => {});
    throw error;
  } finally {
    await wake?.close();
  }

  /** Starts one run of the automation, as the webhook route does. */
  async function startOne(automationSlug: string, i: number): Promise<string> {
    const { runId } = await startRun(
      db,
      {
        orgSlug: "bench",
        automationSlug,
        rawBody: "{}",
        body: { id: `r${i}`, n: i },
        headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
        via: "bench",
        auth: { kind: "operator" },
      },
      { ...(wake ? { wake } : {}), ...(s.startsReadTarget ? { keepTarget: false } : {}) },
    );
    return runId;
  }

  /** Throws when one of the row's processes exited. */
  function failIfDead(): void {
    const dead = apps.find((a) => a.exits.length > 0);
    if (dead) throw new Error(`${s.label}: ${dead.name} exited\n${dead.output().slice(-2000)}`);
  }

  /**
   * The closed loop: `inFlight` loops, each starting a run and waiting for the poller to see it finish, until `count`
   * were started; fails when a process exits, the poller does, or after 5 minutes.
   */
  async function closedLoopRuns(count: number, finishes: FinishPoller, start: (i: number) => Promise<string>, what: string): Promise<void> {
    const deadline = Date.now() + 5 * 60_000;
    let active = true;
    const watchdog = (async () => {
      while (active) {
        failIfDead();
        if (Date.now() > deadline) throw new Error(`${s.label}: ${what} still running after 5 minutes`);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    let next = 0;
    try {
      await Promise.race([
        watchdog,
        finishes.failed,
        Promise.all(
          Array.from({ length: s.inFlight }, async () => {
            while (next < count && active) await finishes.finished(await start(next++));
          }),
        ),
      ]);
    } finally {
      active = false;
    }
    await watchdog;
  }

  /** The closed loop's warm-up: its runs to their ends, through a poller of its own (its polls are not the row's). */
  async function warmUp(): Promise<void> {
    const finishes = await startFinishPoller(env.url);
    poller = finishes;
    try {
      await closedLoopRuns(closedWarmup, finishes, (i) => startOne(warmSlug, i), "the warm-up's runs");
      // A warm-up run that failed would go unseen by the figures: the row stops instead.
      const check = new pg.Client({ connectionString: env.url, application_name: "holdfast-bench-poll" });
      await check.connect();
      const { rows } = await check
        .query<{ n: number }>("SELECT count(*)::int AS n FROM runs r JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1 AND r.status <> 'completed'", [warmSlug])
        .finally(() => check.end());
      if ((rows[0]?.n ?? 0) > 0) throw new Error(`${s.label}: ${rows[0]?.n} of the warm-up's ${closedWarmup} runs did not complete`);
    } finally {
      await finishes.stop().catch(() => 0);
      poller = undefined;
    }
    // The backends' pending statistics flushed and the warm-up's background work done before the window opens; the
    // peers wait as long after theirs (peers/warmup.ts).
    await new Promise((r) => setTimeout(r, s.warmupSettleMs ?? 0));
  }

  async function measureRow(): Promise<RaceResult> {
    // Each app compiles its TypeScript as it starts (tsx): under CI's parallel test files on a slow machine an engine
    // took more than a minute to say ready (fresh-clone CI at 9b4807e), though it came up.
    await Promise.all(apps.map((a) => a.waitForOutput(/ready/, 180_000)));
    await new Promise((r) => setTimeout(r, 500));
    if (closedWarmup > 0) await warmUp();
    await env.noop.reset();
    const poll = new pg.Client({ connectionString: env.url, application_name: "holdfast-bench-poll" });
    await poll.connect();
    let polls = 0;
    // The completion polls run every few milliseconds beside the engine on the same cores (the peers learn of a finished
    // workflow in process, for nothing): each is a prepared statement, planned once, so the harness takes as little of
    // the machine as it can.
    const query = async <T extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) => {
      polls++;
      return (await poll.query<T>({ name, text, values })).rows;
    };

    // The closed loop's completion poll runs in a process of its own: the harness's, not the engine's (finish-poller.ts).
    const finishes = s.rate ? undefined : await startFinishPoller(env.url);
    poller = finishes;
    const window = await env.meter.begin(env.dbName, [
      ...apps.map((a) => ({ name: a.name, pid: () => a.pid() })),
      { name: "driver (starts runs)", pid: () => process.pid },
      { name: "noop-server", pid: () => env.noop.pid },
      ...(finishes ? [{ name: "completion poller", pid: () => finishes.pid }] : []),
    ], { analyze: !s.analyzed });
    // When each start call returned: the wall clock, epoch ms, the machine's clock as the database's now() is (not the
    // monotonic clock, which drifts from the wall clock over a long bench).
    const returned = new Map<string, number>();
    const start = async (i: number) => {
      const runId = await startOne(slug, i);
      returned.set(runId, Date.now());
      return runId;
    };
    const deadline = Date.now() + 5 * 60_000;
    const warmup = s.rate ? (s.warmupRuns ?? 0) : 0;
    const total = s.runs + warmup;
    /** The warm-up's runs: out of the latencies, in everything else. */
    const warmupIds: string[] = [];
    if (s.rate) {
      // Open loop: arrivals at the rate, then wait for the last run.
      const began = Date.now();
      const pending: Promise<string>[] = [];
      for (let i = 0; i < total; i++) {
        const wait = began + (i * 1000) / s.rate - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(start(i));
      }
      const ids = await Promise.all(pending);
      warmupIds.push(...ids.slice(0, warmup));
      for (;;) {
        const [row] = await query<{ open: number }>("bench_open", "SELECT count(*)::int AS open FROM runs WHERE id = ANY($1) AND status = 'running'", [ids]);
        if (row?.open === 0) break;
        failIfDead();
        if (Date.now() > deadline) throw new Error(`${s.label}: ${row?.open} runs still running`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } else if (finishes) {
      // Closed loop: `inFlight` loops, each starting a run and waiting for the poller to see it finish.
      await closedLoopRuns(s.runs, finishes, start, "runs");
    }
    await window.done();
    // After the window's last sample, so the poller is measured to the end.
    if (finishes) polls += await finishes.stop();
    await Promise.all(apps.map((a) => a.stop()));
    await db.$disconnect();
    const measured = await window.end();
    // The bench's own completion polls ran in the measured database: they are not the engine's commits.
    measured.commits -= polls;
    delete measured.pgCpu["holdfast-bench-poll"];

    const [runs] = await poll.query(
      `SELECT EXTRACT(EPOCH FROM max(r.finished_at) - min(r.created_at))::float8 AS secs,
              count(*) FILTER (WHERE r.status = 'completed')::int AS completed,
              array_agg(EXTRACT(EPOCH FROM r.finished_at - r.created_at) * 1000 ORDER BY r.finished_at - r.created_at)
                FILTER (WHERE r.id <> ALL($2::text[])) AS lat
       FROM runs r JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1`,
      [slug, warmupIds],
    ).then((r) => r.rows);
    const [steps] = await poll.query(
      `SELECT count(*)::int AS steps, count(*) FILTER (WHERE s.status = 'done')::int AS done,
              (SELECT count(*)::int FROM run_events e JOIN runs r2 ON r2.id = e.run_id JOIN automations a2 ON a2.id = r2.automation_id
                WHERE a2.slug = $1 AND e.type = 'step.succeeded') AS settles
       FROM steps s JOIN runs r ON r.id = s.run_id JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1`,
      [slug],
    ).then((r) => r.rows);
    // A chained step: its predecessor's settle commit to its claim (0 when that settle claimed it: its row says so in
    // data.chained, holdfast_step_settle). The first step: the start's commit (the run's row and the first step's are
    // written by the start's one statement) to its first claim. Database clock both.
    const chained = await poll.query(
      `WITH ev AS (
         SELECT e.type, e.at, e.data ? 'chained' AS claimed_next, lag(e.type) OVER w AS prev_type, lag(e.at) OVER w AS prev_at
         FROM run_events e JOIN runs r ON r.id = e.run_id JOIN automations a ON a.id = r.automation_id
         WHERE a.slug = $1 AND e.type IN ('step.succeeded', 'step.claimed') AND r.id <> ALL($2::text[])
         WINDOW w AS (PARTITION BY e.run_id ORDER BY e.id))
       SELECT ms FROM (
         SELECT 0::float8 AS ms FROM ev WHERE type = 'step.succeeded' AND claimed_next
         UNION ALL
         SELECT EXTRACT(EPOCH FROM at - prev_at)::float8 * 1000 FROM ev WHERE type = 'step.claimed' AND prev_type = 'step.succeeded') c
       ORDER BY 1`,
      [slug, warmupIds],
    );
    const first = await poll.query<{ id: string; ms: number; claimed: number; warmup: boolean }>(
      `SELECT r.id, EXTRACT(EPOCH FROM c.at - r.created_at)::float8 * 1000 AS ms, EXTRACT(EPOCH FROM c.at)::float8 * 1000 AS claimed,
              r.id = ANY($2::text[]) AS warmup
       FROM runs r JOIN automations a ON a.id = r.automation_id
       JOIN steps s ON s.run_id = r.id AND s.node_id = 's1'
       JOIN run_events c ON c.run_id = r.id AND c.step_id = s.id AND c.type = 'step.claimed' AND c.attempt = 1
       WHERE a.slug = $1 ORDER BY 1`,
      [slug, warmupIds],
    );
    const measuredFirst = first.rows.filter((r) => !r.warmup);
    // The start's commit itself, where the server records commit times (track_commit_timestamp = on): the commit of
    // the transaction that wrote the run's run.started row (nothing in a bench row updates it) to the first step's claim.
    const commitTimes = (await poll.query<{ on: boolean }>("SELECT current_setting('track_commit_timestamp') = 'on' AS on")).rows[0]?.on;
    const fromCommit = commitTimes
      ? await poll.query<{ ms: number; warmup: boolean }>(
          `SELECT EXTRACT(EPOCH FROM c.at - pg_xact_commit_timestamp(e.xmin))::float8 * 1000 AS ms, r.id = ANY($2::text[]) AS warmup
           FROM runs r JOIN automations a ON a.id = r.automation_id
           JOIN run_events e ON e.run_id = r.id AND e.type = 'run.started'
           JOIN steps s ON s.run_id = r.id AND s.node_id = 's1'
           JOIN run_events c ON c.run_id = r.id AND c.step_id = s.id AND c.type = 'step.claimed' AND c.attempt = 1
           WHERE a.slug = $1 AND pg_xact_commit_timestamp(e.xmin) IS NOT NULL ORDER BY 1`,
          [slug, warmupIds],
        )
      : null;
    await poll.end();
    const effects = s.step === "http" ? await env.noop.stats() : null;
    const expected = total * s.steps;
    const lat = (runs.lat as (number | string)[] | null ?? []).map(Number);
    return {
      system: "Holdfast",
      scenario: s.step,
      label: s.label,
      runs: total,
      steps: steps.done,
      seconds: runs.secs,
      runsPerSec: runs.completed / runs.secs,
      stepsPerSec: steps.done / runs.secs,
      inFlight: s.rate ? null : s.inFlight,
      latencyMs: quantiles(lat) ?? { p50: Number.NaN, p99: Number.NaN },
      firstDispatchMs: quantiles(measuredFirst.map((r) => Number(r.ms))),
      firstFromReturnMs: quantiles(
        measuredFirst.flatMap((r) => {
          const at = returned.get(r.id);
          return at === undefined ? [] : [Number(r.claimed) - at];
        }),
      ),
      firstFromCommitMs: fromCommit ? quantiles(fromCommit.rows.filter((r) => !r.warmup).map((r) => Number(r.ms))) : undefined,
      ...(warmup
        ? {
            warmupRuns: warmup,
            // From the start's commit where the server records commit times, else from its transaction.
            firstWarmupMs: quantiles(fromCommit ? fromCommit.rows.filter((r) => r.warmup).map((r) => Number(r.ms)) : first.rows.filter((r) => r.warmup).map((r) => Number(r.ms))),
          }
        : {}),
      chainedDispatchMs: quantiles(chained.rows.map((r) => Number(r.ms))),
      dispatchClock: "database",
      measured,
      systemNode: [...apps.map((a) => a.name), "driver (starts runs)"],
      lost: total - runs.completed + (expected - steps.done) + (effects ? Math.max(0, expected - effects.keys) : 0),
      duplicated: steps.settles - steps.done + (effects ? effects.repeated + Math.max(0, effects.keys - expected) : 0),
    };
  }
}
