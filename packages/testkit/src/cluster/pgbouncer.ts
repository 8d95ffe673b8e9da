import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chownSync, mkdirSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../web";
import { ensureClusterPackages } from "./install";

/** A PgBouncer of a test's own, in front of some PostgreSQL (the machine's, or a cluster's HAProxy). */
export interface PgBouncerHandle {
  port: number;
  /** URL of database `db` as `user` through this PgBouncer (no password: auth_type trust, like the PostgreSQL here). */
  url(db: string, user: string): string;
  /** Runs one statement on PgBouncer's admin console (SHOW POOLS, SHOW SERVERS, ...) and returns its rows. */
  admin<R = Record<string, unknown>>(command: string): Promise<R[]>;
  /** Its log so far (a failing test prints it). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  upstreamHost: string;
  upstreamPort: number;
  poolMode?: "transaction" | "session";
  /** Server connections per (database, user) pair. */
  defaultPoolSize?: number;
  maxClientConn?: number;
  /** Seconds PgBouncer waits after a failed server login before it tries again (its default, 15, lengthens a failover). */
  serverLoginRetrySeconds?: number;
  /**
   * How long a client may wait for a server connection before PgBouncer refuses its query (query_wait_timeout;
   * PgBouncer's default 120). In front of a failover a short one lets the web answer 503 + Retry-After at once
   * instead of holding each delivery until its sender gives up.
   */
  queryWaitTimeoutSeconds?: number;
}

const bin = process.env.HOLDFAST_PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer";
/** The roles the product connects as (prisma/migrations/20261201050000_tenancy creates the two holdfast_ ones). */
const roles = ["postgres", "holdfast_web", "holdfast_worker"];

/**
 * Starts /usr/sbin/pgbouncer with its config, auth file and log in `dir`, on a free port, and resolves once it
 * answers. Any database name passes through to the upstream (`* = host port`). PgBouncer refuses to run as root, so
 * as root it runs as the `postgres` OS user (spawned with that uid; stop() kills it directly).
 */
export async function startPgBouncer(dir: string, o: PgBouncerOptions): Promise<PgBouncerHandle> {
  await ensureClusterPackages();
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  const logFile = join(dir, "pgbouncer.log");
  writeFileSync(join(dir, "userlist.txt"), `${roles.map((r) => `"${r}" ""`).join("\n")}\n`);
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${o.upstreamHost} port=${o.upstreamPort}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      // trust: no password asked, but the user must be listed in auth_file (PgBouncer's rule).
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      "admin_users = postgres",
      "stats_users = postgres",
      `pool_mode = ${o.poolMode ?? "transaction"}`,
      `default_pool_size = ${o.defaultPoolSize ?? 4}`,
      "min_pool_size = 0",
      "reserve_pool_size = 0",
      `max_client_conn = ${o.maxClientConn ?? 500}`,
      // node-postgres sends none of these by default; a client that does (psql's extra_float_digits) is not refused.
      "ignore_startup_parameters = extra_float_digits",
      "server_reset_query = DISCARD ALL",
      `server_login_retry = ${o.serverLoginRetrySeconds ?? 15}`,
      `query_wait_timeout = ${o.queryWaitTimeoutSeconds ?? 120}`,
      `logfile = ${logFile}`,
      `pidfile = ${join(dir, "pgbouncer.pid")}`,
      "",
    ].join("\n"),
  );
  const asRoot = userInfo().uid === 0;
  const ids = asRoot ? osIds("postgres") : undefined;
  if (ids) for (const f of [dir, ini, join(dir, "userlist.txt")]) chownSync(f, ids.uid, ids.gid);
  let output = "";
  // cwd "/": run as postgres, it may not enter the test's own folder (a CI clone under a private mktemp folder).
  const child: ChildProcess = spawn(bin, [ini], { cwd: "/", stdio: ["ignore", "pipe", "pipe"], ...(ids ?? {}) });
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  // Killed with the test process however it exits (a crashed or timed-out worker never reaches its afterAll).
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      process.off("exit", killOnExit);
      resolve();
    }),
  );
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGINT"); // SIGINT: PgBouncer's fast shutdown (SIGTERM waits for clients to leave)
    const killed = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(killed);
  };
  const url = (db: string, user: string) => `postgresql://${user}@127.0.0.1:${port}/${db}`;
  try {
    await waitAnswers(url("postgres", "postgres"), () => child.exitCode !== null, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    port,
    url,
    log: () => output,
    async admin<R>(command: string) {
      // The admin console speaks the simple query protocol only: pg uses it for a statement without values.
      const c = new pg.Client({ connectionString: url("pgbouncer", "postgres") });
      await c.connect();
      try {
        return (await c.query(command)).rows as R[];
      } finally {
        await c.end();
      }
    },
    stop,
  };
}

function osIds(user: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync("id", [flag, user], { encoding: "utf8" }).stdout.trim());
  return { uid: id("-u"), gid: id("-g") };
}

async function waitAnswers(url: string, died: () => boolean, output: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (died()) throw new Error(`PgBouncer exited at start:\n${output()}`);
    const c = new pg.Client({ connectionString: url });
    c.on("error", () => {});
    try {
      await c.connect();
      await c.query("SELECT 1");
      await c.end();
      return;
    } catch {
      await c.end().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`PgBouncer did not answer at ${url}:\n${output()}`);
}
