import { chownSync, mkdirSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { asUser, run, sleep } from "./exec";

/**
 * The soak's own PostgreSQL cluster (initdb into a temporary directory, a free port): restarting it harms nobody
 * else's tests on this machine. As root it runs as the `postgres` OS user.
 */
export interface OwnPostgres {
  port: number;
  /** Superuser URL of database `name`. */
  url(name: string): string;
  /** Stop (fast: connections are cut, nothing is lost), stay down `downMs`, start again. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
  log: string;
}

const bin = process.env.SOAK_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export async function startOwnPostgres(dir: string, port: number): Promise<OwnPostgres> {
  const user = userInfo().uid === 0 ? (process.env.SOAK_PG_USER ?? "postgres") : null;
  const data = join(dir, "pg");
  const log = join(dir, "pg.log");
  mkdirSync(data, { recursive: true });
  if (user) {
    const { uid, gid } = await osUser(user);
    chownSync(dir, uid, gid);
    chownSync(data, uid, gid);
  }
  await run(...asUser(user, join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]));
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    "-c max_connections=400",
    "-c shared_buffers=256MB",
    // Crash safety is not under test (restarts are clean, -m fast); the machine's disk is shared.
    "-c fsync=off",
    "-c full_page_writes=off",
  ].join(" ");
  const ctl = (...args: string[]) => run(...asUser(user, join(bin, "pg_ctl"), ["-D", data, "-l", log, "-w", "-t", "60", ...args]));
  const start = () => ctl("-o", options, "start");
  await start();
  const superUrl = (name: string) => `postgresql://postgres@127.0.0.1:${port}/${name}`;
  await waitReady(superUrl("postgres"));
  return {
    port,
    log,
    url: superUrl,
    async restart(downMs) {
      await ctl("-m", "fast", "stop");
      await sleep(downMs);
      await start();
    },
    async stop() {
      await ctl("-m", "fast", "stop").catch(() => ctl("-m", "immediate", "stop").catch(() => undefined));
    },
  };
}

async function osUser(name: string): Promise<{ uid: number; gid: number }> {
  return { uid: Number((await run("id", ["-u", name])).trim()), gid: Number((await run("id", ["-g", name])).trim()) };
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const c = new pg.Client({ connectionString: url });
    c.on("error", () => {}); // a server still shutting down may end it at any moment: the next try is the answer
    try {
      await c.connect();
      await c.end();
      return;
    } catch {
      await c.end().catch(() => undefined);
      await sleep(100);
    }
  }
  throw new Error(`PostgreSQL at ${url} did not answer`);
}
