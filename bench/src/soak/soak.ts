import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "@holdfast/testkit/procs";
import { queueJobCounts, queueNames, redisTargetOf } from "@holdfast/queue";
import pg from "pg";
import { checkInvariants, type Figures, type Invariant } from "./checks";
import { type FleetConfig, fleetSpecs, type Member, ownExits, queueFaultPreload, startMember, stopFleet } from "./fleet";
import { type Injected, injectFaults } from "./faults/inject";
import { clusterOutages, type Fault, faultsPerKind, planFaults, restartsFor } from "./faults/schedule";
import { type FailoverFigures, failoverFigures } from "./failovers";
import { startHumans, type HumanFigures } from "./humans";
import { sleep } from "./infra/exec";
import { startServices } from "./infra/services";
import { materialiseRelease } from "./infra/release";
import { buildSnapshot, buildSnapshotCli, snapshotSource } from "./infra/source";
import { snapshotWeb } from "./infra/web";
import { answersOverTime, startLoad } from "./load";
import { approver } from "./mix";
import { freePort, sessionCookieFor } from "./testkit";
import { startFronts, switchFigures, type UpgradeFigures, upgradeInvariants, upgradeUnderTraffic } from "./upgrade";
import { watchDatabase } from "./dbwatch";
import { watchFleet } from "./watch";
import { automation, deploy, org, startProviders } from "./world";

export interface SoakOptions {
  runs: number;
  seed: number;
  /** Deliveries per second. */
  rate: number;
  /** How long runs may take to settle after the last fault is over before the soak calls them lost. */
  drainSeconds: number;
  pgRestarts?: number;
  redisRestarts?: number;
  /**
   * Run on the clustered topology (docs/reliability.md, "The cluster soak"): PostgreSQL under Patroni behind HAProxy
   * and PgBouncer, a Redis Cluster; leader and master kills and a database path cut instead of restarts.
   */
  cluster?: boolean;
  /** Cluster soak: leader kills, master kills, cuts (default 2, 2, 1) and how long a cut lasts (default 10 s). */
  pgFailovers?: number;
  redisFailovers?: number;
  dbCuts?: number;
  cutMs?: number;
  /** Kills and freezes per process kind (default: 20 at 10,000 runs, in proportion, at least 1). */
  perKind?: number;
  /**
   * The rolling upgrade (docs/operations.md, "Upgrading under traffic"): the processes start from the release at this
   * git ref, built from its own sources, on a database it migrated; under traffic this checkout's migrations apply
   * and every process is replaced by this checkout's, one at a time. No random faults in this mode.
   */
  upgradeFrom?: string;
  /** Upgrade: seconds the old processes run alone on the new schema before the first replacement (default 10). */
  upgradeHoldSeconds?: number;
  keep?: boolean;
  /** Print each fault as it happens. */
  verbose?: boolean;
  log?: (line: string) => void;
  /**
   * The whole soak's bound in seconds (default: the drain bound plus 10 minutes). Past it the soak stops where it is,
   * says in which stage, and hands its result to `onStall` (the command prints it and exits), so a soak that hangs
   * still reports what it saw instead of being cut off by its caller's timeout.
   */
  maxSeconds?: number;
  onStall?: (result: SoakResult) => void;
}

export interface SoakResult {
  seed: number;
  runs: number;
  /** The cluster soak's topology and its failovers as the senders saw them; null for the single-node soak. */
  cluster: { topology: string; failovers: FailoverFigures | null } | null;
  /** The upgrade soak's figures (--upgrade-from); null otherwise. */
  upgrade: UpgradeFigures | null;
  ok: boolean;
  invariants: Invariant[];
  figures: Figures | null;
  humans: HumanFigures;
  faults: {
    planned: Record<string, number>;
    injected: Record<string, number>;
    byTarget: Record<string, number>;
    queue: Record<string, number>;
    /** SIGKILL exits the supervisors saw (a kill that hit a process already on its way out would not show). */
    killsSeen: number;
  };
  timing: { loadSeconds: number; lastFaultSeconds: number; drainAfterLastFaultSeconds: number | null; totalSeconds: number; runsPerSecond: number };
  /** Process restarts and web availability over time, with the faults (seconds after the load began). */
  timeline: string[];
  /** The sender's answers per 10 s, by HTTP status (0: no answer). */
  answers: Record<string, Record<string, number>>;
  /** Where the processes' logs and the database's log were kept (a failed soak keeps its directory). */
  dir: string | null;
  /** Exits of processes the soak did not kill (each was restarted by its supervisor): what broke in an outage. */
  ownExits: { label: string; code: number | null; signal: string | null; before: string }[];
  error?: string;
}

const timing = { replyTimeoutSeconds: 20, pauseSeconds: 2, approvalDeadlineSeconds: 900 };

/**
 * The chaos soak: a deployment of every process kind (several of each) on its own PostgreSQL and Redis, a load of
 * webhook deliveries through the web, scripted approvers and repliers, and a seeded schedule of faults (SIGKILL and
 * SIGSTOP of every process kind, PostgreSQL and Redis restarts (with --cluster: leader and master kills and one
 * process's database path cut), a queue that drops, repeats and delays wake-ups);
 * then, once everything settled, the invariants.
 */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const log = o.log ?? ((line: string) => console.log(line));
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "holdfast-soak-"));
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch((e) => log(`cleanup: ${(e as Error).message}`));
    if (o.keep || !result.ok) result.dir = dir;
    else rmSync(dir, { recursive: true, force: true });
  };
  // The deployment's key, shared by this process (it encrypts the connections' secrets) and every process it starts.
  process.env.HOLDFAST_SECRET_KEY ??= randomBytes(32).toString("hex");
  const secretKey = process.env.HOLDFAST_SECRET_KEY;
  const result: SoakResult = {
    seed: o.seed,
    runs: o.runs,
    cluster: null,
    upgrade: null,
    ok: false,
    invariants: [],
    figures: null,
    humans: { slackClicks: 0, inboxClicks: 0, decided: 0, slackFallbacks: 0, slackRefusedBeforeStored: 0, repliesSmtp: 0, repliesApi: 0, replyRetries: 0, refusals: [] },
    faults: { planned: {}, injected: {}, byTarget: {}, queue: {}, killsSeen: 0 },
    timing: { loadSeconds: 0, lastFaultSeconds: 0, drainAfterLastFaultSeconds: null, totalSeconds: 0, runsPerSecond: 0 },
    ownExits: [],
    answers: {},
    timeline: [],
    dir: null,
  };
  let fleet: Member[] = [];
  const retired: Member[] = [];
  let stage = "starting PostgreSQL, Redis and the stand-ins";
  const maxSeconds = o.maxSeconds ?? o.drainSeconds + 600;
  const watchdog = setTimeout(async () => {
    result.error = `the soak stalled while ${stage}: not done ${maxSeconds} s after it began`;
    log(`soak: ${result.error}`);
    keepLogs(dir, fleet, retired);
    await Promise.race([cleanup(), sleep(30_000)]);
    result.timing.totalSeconds = (Date.now() - started) / 1000;
    o.onStall?.(result);
  }, maxSeconds * 1000);
  watchdog.unref();
  // An error no code of the soak's hears (an 'error' event without a listener, in a harness stream or client) would end
  // this process with the deployment it started still running, each of its processes on a CI machine's cores until
  // the machine stops. It ends the soak as a stall does instead: the deployment stopped, the result printed.
  const crashed = async (error: unknown) => {
    clearTimeout(watchdog);
    result.error = `the soak itself failed while ${stage}: ${(error as Error)?.stack ?? String(error)}`;
    log(`soak: ${result.error}`);
    keepLogs(dir, fleet, retired);
    await Promise.race([cleanup(), sleep(30_000)]);
    result.timing.totalSeconds = (Date.now() - started) / 1000;
    if (o.onStall) o.onStall(result);
    else process.exit(1);
  };
  process.once("uncaughtException", crashed);
  try {
    // Infrastructure of our own: restarting it disturbs no one else's tests.
    const [web1, web2, mailInPort] = [await freePort(), await freePort(), await freePort()];
    const services = await startServices({ cluster: o.cluster === true, seed: o.seed }, dir, cleanups, log);
    if (o.cluster) result.cluster = { topology: services.describe, failovers: null };
    const providers = await startProviders();
    cleanups.push(() => providers.close());
    const root = snapshotSource(dir);
    const rootBuild = await buildSnapshot(root);
    // The upgrade soak's old release, built from its own sources; its CLI migrates the database (deploy()).
    stage = `building the release ${o.upgradeFrom}`;
    const release = o.upgradeFrom ? await materialiseRelease(o.upgradeFrom, dir, log) : null;
    const nextCli = release ? await buildSnapshotCli(root) : "";
    const d = await deploy(release?.root ?? root, services.adminUrl, providers, timing);
    cleanups.push(() => d.db.$disconnect());
    log(`soak: seed ${o.seed}, ${o.runs} runs at ${o.rate}/s; ${services.describe}; dir ${dir}`);

    const web = await snapshotWeb(`.holdfast-soak-web-${process.pid}`);
    cleanups.push(() => web.remove());
    // The upgrade soak's senders reach each web through a front (a TCP proxy) the upgrade switches to the new web.
    const fronts = release ? await startFronts([web1, web2]) : [];
    cleanups.push(() => Promise.all(fronts.map((f) => f.close())));
    const webs = (release ? fronts.map((f) => f.port) : [web1, web2]).map((p) => `http://127.0.0.1:${p}`);
    const inboundToken = randomBytes(16).toString("hex");
    const queueLog = join(dir, "queue-faults.log");
    const env: Record<string, string> = {
      DATABASE_URL: d.workerUrl,
      REDIS_URL: services.redisUrl,
      QUEUE_PREFIX: "soak",
      LOG_LEVEL: "info",
      HOLDFAST_SECRET_KEY: secretKey,
      HOLDFAST_EGRESS_ALLOW: "127.0.0.1,::1,localhost",
      HOLDFAST_PUBLIC_URL: webs[0] as string,
      RELAY_POLL_MS: "200",
      SWEEP_INTERVAL_MS: "500",
      // Shorter than a deployment's (30-60 s) so a killed worker's steps come back within the soak, long enough that a
      // starved process on this shared machine does not lose its leases all the time; a freeze may outlast them.
      SWEEP_STALE_SECONDS: "10",
      LEADER_LEASE_MS: "5000",
      LANE_LEASE_MS: "10000",
      SHUTDOWN_GRACE_MS: "2000",
      APPROVAL_NOTIFY_LEASE_SECONDS: "10",
      CONNECTION_PROBE_SECONDS: "0",
    };
    const webEnv = { SLACK_SIGNING_SECRET: "soak-slack-signing-secret", INBOUND_EMAIL_TOKEN: inboundToken };
    const current: FleetConfig = {
      root,
      rootBuild,
      env,
      ...(services.envFor ? { envFor: services.envFor } : {}),
      web: { dir: web.dir, ports: [web1, web2], env: webEnv },
      mailInPort,
      inboundDomain: "reply.soak.test",
      lanes: release ? { io: 2, slow: 1, human: 1 } : { io: 3, slow: 1, human: 2 },
      engines: 2,
      sweepers: release ? 1 : 2,
      relays: 2,
      // The upgrade soak has no random faults: what it tests is the upgrade.
      ...(release ? {} : { queueFaults: { preload: queueFaultPreload, env: { SOAK_QUEUE_SEED: String(o.seed), SOAK_QUEUE_LOG: queueLog } } }),
    };
    // The old release runs its own build of the apps (apps/<app>/dist) and its own web, with its own next.
    const first: FleetConfig = release ? { ...current, root: release.root, rootBuild: "dist", web: { ...current.web, dir: release.webDir, next: release.nextBin } } : current;
    const specs = fleetSpecs(first);
    fleet = specs.map((spec) => startMember(first, spec));
    cleanups.push(() => stopFleet(fleet));
    stage = "waiting for every process to answer";
    await Promise.all(fleet.map((m) => m.ready()));
    log(`soak: ${fleet.length} processes ready after ${((Date.now() - started) / 1000).toFixed(1)} s: ${fleet.map((m) => m.label).join(", ")}`);

    const cookie = await sessionCookieFor(d.db, approver.email, approver.password);
    const humans = startHumans({ seed: o.seed, webs, slack: providers.slack, smtp: providers.smtp, signingSecret: "soak-slack-signing-secret", cookie, mailInPort, inboundToken, log });
    cleanups.push(() => humans.stop());
    result.humans = humans.figures;

    const loadMs = (o.runs / o.rate) * 1000;
    const perKind = o.perKind ?? faultsPerKind(o.runs);
    const schedule: Fault[] = release ? [] : planFaults({
      seed: o.seed,
      loadMs,
      perKind,
      ...(o.cluster
        ? {
            pgRestarts: 0,
            redisRestarts: 0,
            pgFailovers: o.pgFailovers ?? clusterOutages.pgFailovers,
            redisFailovers: o.redisFailovers ?? clusterOutages.redisFailovers,
            dbCuts: o.dbCuts ?? clusterOutages.dbCuts,
            cutMs: o.cutMs ?? clusterOutages.cutMs,
          }
        : { pgRestarts: o.pgRestarts ?? restartsFor(o.runs), redisRestarts: o.redisRestarts ?? restartsFor(o.runs) }),
      stopMs: [1_000, 15_000],
      downMs: [500, 4_000],
    });
    result.faults.planned = tally(schedule.map((f) => f.kind));
    if (release) log(`soak: upgrade from ${release.commit.slice(0, 12)} under traffic; no random faults in this mode`);
    else log(`soak: ${schedule.length} faults planned over ${(loadMs / 1000).toFixed(0)} s: ${JSON.stringify(result.faults.planned)} (${perKind} kills and ${perKind} freezes per process kind)`);

    stage = "sending the load and injecting the faults";
    const t0 = Date.now();
    const watch = watchFleet(fleet, new Map(webs.map((base, i) => [`web-${i + 1}`, base])), t0);
    cleanups.push(() => watch.stop());
    result.timeline = watch.events;
    const dbWatch = watchDatabase(d.adminUrl, t0, watch.events);
    cleanups.push(() => dbWatch.stop());
    const load = startLoad({ seed: o.seed, runs: o.runs, rate: o.rate, webs, path: `/api/hooks/${org}/${automation}`, signingSecret: d.signingSecret, log }, t0);
    cleanups.push(() => load.stop());
    const injection = injectFaults(schedule, fleet, services.outages, t0, (line) => {
      watch.events.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${line.replace(/^fault \d+ ms: /, "")}`);
      if (o.verbose) log(line);
    });
    cleanups.push(() => injection.abort());
    const progress = setInterval(() => {
      const acked = load.deliveries.filter((x) => x.runIds.length > 0).length;
      log(`soak: ${((Date.now() - t0) / 1000).toFixed(0)} s: ${load.deliveries.length} sent, ${acked} acknowledged; ${humans.figures.decided} decided, ${humans.figures.repliesSmtp + humans.figures.repliesApi} replies`);
    }, 15_000);
    cleanups.push(() => clearInterval(progress));

    const upgrading = release
      ? sleep(loadMs * 0.2).then(() =>
          upgradeUnderTraffic({ fleet, specs, retired, fronts, next: current, nextCli, adminUrl: d.adminUrl, workerUrl: d.workerUrl, deliveries: load.deliveries, t0, holdMs: (o.upgradeHoldSeconds ?? 10) * 1000, log, events: watch.events }),
        )
      : null;
    upgrading?.catch(() => {}); // awaited below; a failure before then is not unhandled
    const injected: Injected[] = await injection.done;
    if (release && upgrading) {
      stage = "upgrading under traffic";
      const u = await upgrading;
      const git = (...args: string[]) => (spawnSync("git", ["-C", repoRoot, ...args], { encoding: "utf8" }).stdout ?? "").trim();
      const to = `${git("rev-parse", "HEAD") || "this checkout"}${git("status", "--porcelain", "--untracked-files=no") ? " with its uncommitted changes" : ""}`;
      result.upgrade = { from: release.commit, to, build: release.seconds, ...u, ...switchFigures(load.deliveries, u.window, retired) };
    }
    result.faults.injected = tally(injected.map((f) => f.kind));
    result.faults.byTarget = tally(injected.map((f) => `${f.kind} ${f.targetKind ?? ""}`.trim()));
    // The upgrade soak's drain bound counts from the last replacement.
    const lastFaultMs = Math.max(0, (result.upgrade?.window.to ?? 0) * 1000, ...injected.map((f) => f.endMs));
    result.timing.lastFaultSeconds = lastFaultMs / 1000;
    log(`soak: faults over at ${(lastFaultMs / 1000).toFixed(1)} s`);

    stage = "waiting for the runs to settle";
    // Drain: every delivery acknowledged and every run final or parked, within the bound after the last fault.
    const deadline = t0 + lastFaultMs + o.drainSeconds * 1000;
    const check = new pg.Client({ connectionString: d.adminUrl });
    check.on("error", () => {}); // a lost connection fails the next query, which says so; unheard, the event ends the soak
    await check.connect();
    cleanups.push(() => check.end());
    let drainedAt: number | null = null;
    let loadOver = false;
    load.done.then(() => (loadOver = true));
    for (;;) {
      // Drained: every delivery acknowledged, every run final or parked, and no Slack post or update still owed.
      const { rows } = await check
        .query(
          `SELECT count(*)::int AS n,
                  count(*) FILTER (WHERE r.status = 'running' AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'parked'))::int AS moving,
                  (SELECT count(*)::int FROM approvals a WHERE a.notify_state IN ('post', 'update')) AS owed
           FROM runs r WHERE r.automation_id = $1`,
          [d.automationId],
        )
        .catch(() => ({ rows: [{ n: -1, moving: -1, owed: -1 }] }));
      const acked = load.deliveries.filter((x) => x.runIds.length > 0).length;
      if (loadOver && acked === load.deliveries.length && rows[0].n === acked && rows[0].moving === 0 && rows[0].owed === 0) {
        drainedAt = Date.now();
        break;
      }
      if (Date.now() > deadline) {
        log(`soak: not drained ${o.drainSeconds} s after the last fault: ${rows[0].moving} runs still moving, ${rows[0].owed} Slack posts or updates owed, ${load.deliveries.length - acked} deliveries unacknowledged`);
        for (const line of await stuckRuns(check, d.automationId)) log(`  ${line}`);
        if (rows[0].owed > 0) {
          for (const line of await owedNotifications(check)) log(`  ${line}`);
          // The human lane's queue: jobs waiting with none active is a consumer that stopped taking; active ones
          // that stay are processors that never returned.
          const target = redisTargetOf({ REDIS_URL: services.redisUrl, REDIS_CLUSTER_NODES: services.envFor?.("lane-worker", "lane-human-1").REDIS_CLUSTER_NODES });
          const counts = await queueJobCounts({ redis: target, prefix: env.QUEUE_PREFIX as string }, queueNames.lane("human")).catch((e: Error) => ({ error: e.message }));
          log(`  the human lane's queue: ${JSON.stringify(counts)}`);
        }
        break;
      }
      await sleep(500);
    }
    result.timing.loadSeconds = (Math.max(...load.deliveries.map((x) => x.ackedAt ?? 0)) || 0) / 1000;
    result.timing.drainAfterLastFaultSeconds = drainedAt === null ? null : Math.max(0, drainedAt - t0 - lastFaultMs) / 1000;
    result.timing.runsPerSecond = drainedAt === null ? 0 : o.runs / ((drainedAt - t0) / 1000);
    result.ownExits = ownExits(fleet);
    result.faults.killsSeen = fleet.reduce((n, m) => n + m.proc.kills(), 0);
    result.answers = answersOverTime(load.deliveries);
    if (result.cluster) result.cluster.failovers = failoverFigures(injected, load.deliveries);
    stage = "stopping the senders and the approvers";
    load.stop();
    await humans.stop();
    stage = "checking the invariants";

    const checked = await checkInvariants({
      root,
      adminUrl: d.adminUrl,
      workerUrl: d.workerUrl,
      automationId: d.automationId,
      deliveries: load.deliveries,
      runsWanted: o.runs,
      providers,
      secretKey,
    });
    result.invariants = [
      {
        name: `every run settles within ${o.drainSeconds} s after the last fault`,
        figure: drainedAt === null ? "not drained" : `drained ${result.timing.drainAfterLastFaultSeconds?.toFixed(1)} s after the last fault`,
        violations: drainedAt === null ? ["the runs did not all settle within the bound"] : [],
      },
      ...checked.invariants,
      ...(result.upgrade ? upgradeInvariants(result.upgrade, specs.length) : []),
    ];
    result.figures = checked.figures;
    result.faults.queue = existsSync(queueLog) ? tally(readFileSync(queueLog, "utf8").split("\n").filter(Boolean).map((l) => l.split("\t")[0] as string)) : {};
    result.ok = result.invariants.every((i) => i.violations.length === 0);
  } catch (error) {
    result.error = (error as Error).stack ?? String(error);
    log(`soak failed: ${result.error}`);
  } finally {
    process.off("uncaughtException", crashed);
    stage = "stopping the deployment";
    keepLogs(dir, fleet, retired);
    await cleanup();
    clearTimeout(watchdog);
    result.timing.totalSeconds = (Date.now() - started) / 1000;
  }
  return result;
}

function keepLogs(dir: string, fleet: Member[], retired: Member[]): void {
  if (!fleet.length) return;
  mkdirSync(join(dir, "logs"), { recursive: true });
  for (const m of fleet) writeFileSync(join(dir, "logs", `${m.label}.log`), m.proc.output());
  // The upgrade soak's old-release processes, replaced during the soak.
  for (const m of retired) writeFileSync(join(dir, "logs", `${m.label}-old.log`), m.proc.output());
}

/** The runs that did not settle, each with its steps that are not final: what an operator would look at first. */
async function stuckRuns(check: pg.Client, automationId: string): Promise<string[]> {
  const { rows } = await check
    .query(
      `SELECT r.id, r.status,
              coalesce(string_agg(s.node_id || ' ' || s.status || ' attempt ' || s.attempt ||
                       CASE WHEN s.status IN ('done', 'failed') THEN ' not advanced' ELSE '' END ||
                       ' available in ' || to_char(s.available_at - now(), 'HH24:MI:SS') ||
                       coalesce(' lease left ' || to_char(s.lease_until - now(), 'HH24:MI:SS'), ''), '; '), 'no open step') AS steps
       FROM runs r
       LEFT JOIN steps s ON s.run_id = r.id AND (s.status NOT IN ('done', 'failed', 'cancelled') OR s.advanced_at IS NULL)
       WHERE r.automation_id = $1 AND r.status = 'running'
         AND NOT EXISTS (SELECT 1 FROM steps p WHERE p.run_id = r.id AND p.status = 'parked')
       GROUP BY r.id, r.status ORDER BY r.id LIMIT 10`,
      [automationId],
    )
    .catch((e: Error) => ({ rows: [{ id: "?", status: "?", steps: `could not read: ${e.message}` }] }));
  return rows.map((r) => `run ${r.id} ${r.status}: ${r.steps}`);
}

/**
 * Where the Slack posts and updates still owed stand, grouped: whether the human lane's worker tried them (and how
 * long ago), what it last met, and their wake-ups in the outbox (none unsent: the relay published them; unsent: the
 * relay has not). Tells a stalled relay, a consumer that stopped taking jobs and a sweeper that stopped re-waking apart.
 */
async function owedNotifications(check: pg.Client): Promise<string[]> {
  const { rows } = await check
    .query(
      `SELECT a.notify_state AS state, a.status,
              CASE WHEN a.notify_attempted_at IS NULL THEN 'never tried'
                   ELSE 'tried ' || (extract(epoch FROM now() - a.notify_attempted_at)::int / 30 * 30) || '+ s ago' END AS tried,
              coalesce(left(a.notify_error, 80), '-') AS error,
              count(*)::int AS n,
              sum((SELECT count(*) FROM outbox o WHERE o.topic = 'approval.notify' AND o.payload->>'approvalId' = a.id AND o.sent_at IS NULL))::int AS unsent,
              sum((SELECT count(*) FROM outbox o WHERE o.topic = 'approval.notify' AND o.payload->>'approvalId' = a.id AND o.sent_at IS NOT NULL))::int AS sent,
              max(extract(epoch FROM now() - a.updated_at))::int AS oldest
       FROM approvals a WHERE a.notify_state IN ('post', 'update')
       GROUP BY 1, 2, 3, 4 ORDER BY n DESC LIMIT 12`,
    )
    .catch((e: Error) => ({ rows: [{ state: "?", status: "?", tried: "?", error: `could not read: ${e.message}`, n: 0, unsent: 0, sent: 0, oldest: 0 }] }));
  return rows.map(
    (r) => `owed ${r.state} (approval ${r.status}), ${r.tried}, last error ${r.error}: ${r.n} approvals (oldest ${r.oldest} s), wake-ups ${r.sent} published, ${r.unsent} not yet`,
  );
}

function tally(items: string[]): Record<string, number> {
  return items.reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {});
}
