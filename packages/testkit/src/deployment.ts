import { type AppName, type AppProcess, appEnv, type SpawnOptions, spawnApp } from "./procs";
import { createTestDatabase, type TestDatabase } from "./database";
import { createTestPrefix, testRedisUrl } from "./redis";
import { launchChromium, startWeb, type WebServer } from "./web";
import type { PageAuditOptions } from "./page-audit";

/** One process to start: its name alone, or with its own settings on top of the deployment's and a label. */
export type AppSpec = AppName | ({ app: AppName } & Partial<SpawnOptions>);

/**
 * A deployment of the product for one test file: its own database (cloned from the migrated template) and Redis
 * prefix, and whatever it starts on them (the web app, background processes, a browser, stand-ins it is told to
 * close). `stop` closes the browsers, stops the web apps and the processes, closes the stand-ins, clears the prefix
 * and drops the database. An e2e file makes one in beforeAll and stops it in afterAll.
 */
export interface TestDeployment {
  t: TestDatabase;
  prefix: string;
  /** What every process of the deployment is given: the database, Redis and the queue prefix, logs at info. */
  env: Record<string, string>;
  /** Rows of one SQL query on the test database. */
  // biome-ignore lint/suspicious/noExplicitAny: rows are read by the tests' own column names
  q(sql: string, params?: unknown[]): Promise<any[]>;
  /** The started process of this name (its label, or the app's name). */
  app(name: string): AppProcess;
  /** The web app, once startWeb was called. */
  readonly web: WebServer;
  /** The background processes started so far (stopApps forgets them). */
  readonly apps: AppProcess[];
  /** The built web app on the deployment's environment and `extra`; the first one started is `web`. */
  startWeb(extra?: Record<string, string>, port?: number): Promise<WebServer>;
  /** Spawns one process on the deployment's environment and its own (no waiting). */
  spawn(spec: AppSpec): AppProcess;
  /** Spawns each process and waits until every one logs that it is ready. */
  startApps(specs: AppSpec[], readyWithinMs?: number): Promise<AppProcess[]>;
  /** Chromium (launchChromium: every page audited), closed first when the deployment stops. */
  launchBrowser(options?: { audit?: PageAuditOptions }): Promise<import("playwright-core").Browser>;
  /** The environment testkit's appEnv gives (short leases and sweeps) for this deployment. */
  quickEnv(overrides?: Record<string, string>): Record<string, string>;
  /** Stops the background processes started so far (between tests that each start their own). */
  stopApps(): Promise<void>;
  /** Removes the deployment's keys from Redis (as a Redis that lost its data). */
  clearRedis(): Promise<void>;
  /**
   * `close` is called when the deployment stops (a stand-in server, a proxy), once the processes have stopped: a
   * worker is never left talking to a stand-in that is gone.
   */
  closeAtStop<T extends { close(): Promise<unknown> | unknown }>(thing: T): T;
  stop(): Promise<void>;
}

export async function startTestDeployment(): Promise<TestDeployment> {
  const t = await createTestDatabase();
  const prefix = createTestPrefix();
  const env = { DATABASE_URL: t.url, REDIS_URL: testRedisUrl, QUEUE_PREFIX: prefix.prefix, LOG_LEVEL: "info" };
  let apps: AppProcess[] = [];
  const webs: WebServer[] = [];
  const browsers: import("playwright-core").Browser[] = [];
  const closers: { close(): Promise<unknown> | unknown }[] = [];
  const spawn = (spec: AppSpec) => {
    const { app, ...options } = typeof spec === "string" ? { app: spec } : spec;
    const proc = spawnApp(app, { ...options, env: { ...env, ...options.env } });
    apps.push(proc);
    return proc;
  };
  const stopApps = async () => {
    const stopping = apps;
    apps = [];
    await Promise.all(stopping.map((a) => a.stop()));
  };
  return {
    t,
    prefix: prefix.prefix,
    env,
    q: async (sql, params = []) => (await t.sql.query(sql, params)).rows,
    app(name) {
      const found = apps.find((a) => a.name === name);
      if (!found) throw new Error(`no process named ${name} was started`);
      return found;
    },
    get web() {
      const web = webs[0];
      if (!web) throw new Error("the web app was not started (startWeb)");
      return web;
    },
    get apps() {
      return apps;
    },
    async startWeb(extra = {}, port) {
      const web = await startWeb({ ...env, ...extra }, port);
      webs.push(web);
      return web;
    },
    spawn,
    async startApps(specs, readyWithinMs = 30_000) {
      const started = specs.map(spawn);
      await Promise.all(started.map((a) => a.waitForOutput(/ready/, readyWithinMs)));
      return started;
    },
    async launchBrowser(options = {}) {
      const browser = await launchChromium(options);
      browsers.push(browser);
      return browser;
    },
    quickEnv: (overrides = {}) => appEnv(t.url, prefix.prefix, overrides),
    stopApps,
    clearRedis: () => prefix.clear(),
    closeAtStop(thing) {
      closers.push(thing);
      return thing;
    },
    async stop() {
      for (const browser of browsers) if (browser.isConnected()) await browser.close();
      for (const web of webs.reverse()) await web.stop();
      await stopApps();
      for (const thing of closers.reverse()) await thing.close();
      await prefix.clear();
      await t.drop();
    },
  };
}

/**
 * The background processes as most e2e files run them: the relay (polling every 200 ms), the engine, one lane worker
 * per lane named (with its own settings) and the sweeper (sweeping every 500 ms; `sweeper: false` leaves it out).
 */
export function productProcesses(lanes: Record<string, Record<string, string>>, o: { sweeper?: boolean } = {}): AppSpec[] {
  return [
    { app: "relay", env: { RELAY_POLL_MS: "200" } },
    "engine",
    ...Object.entries(lanes).map(([lane, env]): AppSpec => ({ app: "lane-worker", env: { LANE: lane, ...env } })),
    ...(o.sweeper === false ? [] : [{ app: "sweeper", env: { SWEEP_INTERVAL_MS: "500" } } as const]),
  ];
}

/** The SMTP receiver (mail-in), listening on a port of its own choosing. */
export const mailInSpec: AppSpec = { app: "mail-in", env: { INBOUND_SMTP_PORT: "0" } };

/** The port a started mail-in listens on, read from its ready line. */
export const mailInPort = (mailIn: AppProcess): number => Number(/mail-in ready on port (\d+)/.exec(mailIn.output())?.[1]);
