import { appEntry } from "./app-entry";
import { testRedisUrl } from "./redis";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../../..");

export type AppName = "engine" | "relay" | "sweeper" | "lane-worker" | "mail-in";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AppProcess {
  name: string;
  /** Exits seen so far, in order; SIGKILL exits are crash-point kills. */
  exits: Exit[];
  kills(): number;
  output(): string;
  pid(): number | undefined;
  signal(sig: NodeJS.Signals): void;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM and wait; no restart afterwards. */
  stop(timeoutMs?: number): Promise<Exit>;
}

export interface SpawnOptions {
  env: Record<string, string>;
  /** Arm this crash point; after each SIGKILL the process is restarted, armed again until `cycles` kills. */
  crash?: { point: string; cycles: number; skip?: number };
  /** Restart after any exit that was not asked for (default true when crash is set). */
  restart?: boolean;
  label?: string;
  /** Extra node flags (e.g. --cpu-prof, which NODE_OPTIONS does not accept). */
  nodeArgs?: string[];
  /**
   * true: the production build (apps/<app>/dist/main.mjs, scripts/build.mjs) with plain node; false: the sources
   * through tsx; unset: this `vitest run`'s own build when there is one (app-entry.ts), else the sources.
   */
  built?: boolean;
  /** Run the app from this copy of the repository instead of the checkout (the soak pins its source). */
  root?: string;
  /** With `root`: the folder of that copy's own build of the apps (app-entry.ts). */
  rootBuild?: string;
}

/** Spawns a real app process (the run's build, tsx as `pnpm dev` does, or the production build: app-entry.ts) and supervises it like a process manager would. */
export function spawnApp(app: AppName, options: SpawnOptions): AppProcess {
  const exits: Exit[] = [];
  let out = "";
  let child: ChildProcess | undefined;
  let stopping = false;
  let kills = 0;
  // Closed for good: exited, its output read to the end, and no restart coming. A waiter then fails at once.
  let gone = false;
  const waiters = new Set<() => void>();
  const name = options.label ?? app;
  // Supervised: restarted after an exit it was not asked for (stop()).
  const restarts = options.restart ?? Boolean(options.crash);

  const start = () => {
    gone = false;
    const armed = options.crash && kills < options.crash.cycles;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      LOG_LEVEL: "info",
      ...options.env,
      ...(armed && options.crash ? { HOLDFAST_CRASH_AT: options.crash.point, HOLDFAST_CRASH_SKIP: String(options.crash.skip ?? 0) } : {}),
    };
    if (!armed) delete env.HOLDFAST_CRASH_AT;
    const root = options.root ?? repoRoot;
    const entry = appEntry(root, app, options);
    const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = proc;
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      for (const w of waiters) w();
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    proc.on("exit", (code, signal) => {
      exits.push({ code, signal });
      if (signal === "SIGKILL") kills++;
      out += `\n[${name} exited code=${code} signal=${signal}]\n`;
      for (const w of waiters) w();
      if (!stopping && restarts)
        setTimeout(() => {
          if (!stopping) start();
        }, 50);
    });
    // 'close' comes after the last of its output ('exit' can come before it).
    proc.on("close", () => {
      if (child !== proc || (!stopping && restarts)) return;
      gone = true;
      for (const w of waiters) w();
    });
  };
  start();

  return {
    name,
    exits,
    kills: () => kills,
    output: () => out,
    pid: () => child?.pid,
    signal: (sig) => child?.kill(sig),
    waitForOutput(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(out)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          } else if (gone) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`${name}: exited before any output matching ${pattern}\n${out.slice(-3000)}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${name}: no output matching ${pattern} within ${timeoutMs} ms\n${out.slice(-3000)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop(timeoutMs = 15_000) {
      stopping = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return Promise.resolve(exits.at(-1) ?? { code: 0, signal: null });
      return new Promise((resolve) => {
        const t = setTimeout(() => c.kill("SIGKILL"), timeoutMs);
        c.once("exit", (code, signal) => {
          clearTimeout(t);
          resolve({ code, signal });
        });
        c.kill("SIGTERM");
      });
    },
  };
}

/** Polls `check` until it returns a truthy value. */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, what = "condition"): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await check();
      if (v) return v;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}

/**
 * The environment for the real apps in a test: this file's database and Redis prefix, and timings short enough that
 * sweeps, lease lapses and leader hand-overs happen within a test (2 s leases, 300 ms sweeps, 2 s staleness).
 */
export function appEnv(databaseUrl: string, queuePrefix: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: testRedisUrl,
    QUEUE_PREFIX: queuePrefix,
    DB_POOL_SIZE: "4",
    RELAY_POLL_MS: "200",
    SWEEP_INTERVAL_MS: "300",
    SWEEP_STALE_SECONDS: "2",
    LEADER_LEASE_MS: "3000",
    LANE: "io",
    LANE_LEASE_MS: "2000",
    SHUTDOWN_GRACE_MS: "2000",
    ...overrides,
  };
}

/**
 * Crash tests: starts runs one after another (`start(n)` for n = 0, 1, ...), `everyMs` apart, until `victim` has been
 * killed `cycles` times by its crash point. Returns the ids of every run started.
 */
export async function startUntilKilled(
  victim: AppProcess,
  cycles: number,
  start: (n: number) => Promise<string>,
  options: { everyMs: number; timeoutMs: number; what: string },
): Promise<string[]> {
  const runIds: string[] = [];
  await waitFor(
    async () => {
      runIds.push(await start(runIds.length));
      await new Promise((r) => setTimeout(r, options.everyMs));
      return victim.kills() >= cycles;
    },
    options.timeoutMs,
    options.what,
  );
  return runIds;
}

/**
 * The Node flags the web's `start` script gives its server (apps/web/package.json: the image and `pnpm start` run it),
 * so a test or a bench serves the web as production does: the options before `dist/server.mjs`. All but
 * `--enable-source-maps`: with it, the first error's stack loads the server bundle's source map (about 30 MB, +75-80
 * MB of memory once), which e2e/security-web.test.ts's flat-memory check under 100 MB bodies would count.
 */
export function webNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(repoRoot, "apps/web/package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
  // `node`, options of one word each (`--flag` or `--flag=value`), then the server: any other shape is refused, not guessed.
  const m = /^node((?:\s+--[\w-]+(?:=\S+)?)*)\s+dist\/server\.mjs(?:\s|$)/.exec(start.trim());
  if (!m) throw new Error(`apps/web/package.json's start script is not "node [--option ...] dist/server.mjs ...": ${start}`);
  return (m[1] ?? "").split(/\s+/).filter((w) => w !== "" && w !== "--enable-source-maps");
}
