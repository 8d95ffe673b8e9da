import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Daemon, freeLocalPort, killGroup, type OsUser, osUser, pollUntil, postmasterPid, startDaemon } from "./daemon";
import { ensureClusterPackages } from "./install";
import { startEtcd } from "./etcd";
import { startHaproxy } from "./haproxy";
import { type PatroniNode, patroniConfig } from "./patroni-config";
import { type PgBouncerHandle, startPgBouncer } from "./pgbouncer";

export interface PgClusterHandle {
  /** Superuser URL of `db` through HAProxy's read-write port (follows the leader). */
  url(db: string, user?: string): string;
  /** URL through PgBouncer (transaction mode) -> HAProxy, for `db` as `user`. */
  pooledUrl(db: string, user: string): string;
  /** Direct URL of one node (tests only). */
  nodeUrl(node: string, db: string): string;
  nodes: string[];
  /** The current leader, from Patroni's REST API. */
  leader(): Promise<string>;
  /** SIGKILL the leader's Patroni and its postgres (a host's death); resolves once the other node is leader and a write
   *  through HAProxy succeeds; returns the node killed and ms from kill to that first accepted write. */
  killLeader(): Promise<{ node: string; failoverMs: number }>;
  /** Start a killed node again; it rejoins as the synchronous standby (pg_rewind if needed). Resolves when streaming. */
  restartNode(node: string): Promise<void>;
  haproxyPort: number;
  pgbouncerPort: number;
  stop(): Promise<void>;
}

export interface PgClusterOptions {
  log?: (line: string) => void;
}

/** How long one node may take to come up as leader or as a streaming sync standby (initdb, base backup, rewind). */
const nodeReadyMs = 90_000;

/** Whether a node's Patroni REST API answers 200 on `path` (/primary, /sync, ...). */
async function restOk(node: PatroniNode, path: string): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${node.restPort}${path}`, { signal: AbortSignal.timeout(1_000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** One write through `url` on a fresh connection that gives up quickly (a dead backend must not hang the probe). */
async function probeWrite(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000, query_timeout: 2_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("INSERT INTO hf_failover_probe (at) VALUES (now())");
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Two PostgreSQL 15 nodes under Patroni (synchronous replication, automatic failover), three etcd members, and HAProxy
 * sending clients to whichever node Patroni's REST API names primary. Everything on free ports with its data in `dir`;
 * on a failed start everything started so far is stopped again.
 */
export async function startPgCluster(dir: string, options: PgClusterOptions = {}): Promise<PgClusterHandle> {
  await ensureClusterPackages();
  const log = options.log ?? (() => {});
  const user: OsUser | undefined = userInfo().uid === 0 ? await osUser("postgres") : undefined;
  const scope = `hf${randomBytes(4).toString("hex")}`;
  mkdirSync(dir, { recursive: true });
  // The servers run as `postgres` in folders below `dir`: they must be able to pass through it (mkdtemp makes it 0700).
  if (user) chmodSync(dir, 0o711);
  const nodes: PatroniNode[] = [];
  for (const name of ["pg1", "pg2"]) nodes.push({ name, pgPort: await freeLocalPort(), restPort: await freeLocalPort(), dir: join(dir, name) });
  const haproxyPort = await freeLocalPort();
  const patronis = new Map<string, Daemon>();
  const others: Daemon[] = [];
  let bouncer: PgBouncerHandle | undefined;

  const stop = async () => {
    await bouncer?.stop();
    for (const d of [...patronis.values(), ...others]) d.kill();
    // Immediate shutdown (SIGQUIT) lets the postmaster end its backends and free its shared memory; SIGKILL after.
    const pids = nodes.map((n) => postmasterPid(join(n.dir, "data"))).filter((p): p is number => p !== undefined);
    for (const pid of pids) signal(pid, "SIGQUIT");
    await pollUntil("postmasters to exit", 5_000, async () => pids.every((p) => !alive(p))).catch(() => undefined);
    for (const pid of pids) killGroup(pid);
  };

  const startPatroni = (node: PatroniNode) => {
    const daemon = startDaemon(`patroni-${node.name}`, "/usr/bin/patroni", [join(node.dir, "patroni.yml")], {
      log: join(node.dir, "patroni.log"),
      user,
      env: { ...process.env, HOME: node.dir },
    });
    patronis.set(node.name, daemon);
  };

  try {
    const etcd = await startEtcd(join(dir, "etcd"), scope);
    others.push(...etcd.daemons);
    log(`etcd up: ${etcd.hosts.join(",")}`);
    for (const node of nodes) {
      mkdirSync(node.dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(node.dir, "patroni.yml"), JSON.stringify(patroniConfig(scope, node, etcd.hosts), null, 2));
      writeFileSync(join(node.dir, "patroni.log"), "");
      if (user) for (const f of ["", "patroni.yml", "patroni.log"]) chownSync(join(node.dir, f), user.uid, user.gid);
    }
    // The first node bootstraps (initdb) and leads; the second then clones it and becomes the sync standby.
    startPatroni(nodes[0]!);
    await pollUntil(`${nodes[0]!.name} to bootstrap and lead`, nodeReadyMs, () => restOk(nodes[0]!, "/primary"), 250).catch(withLog(nodes[0]!));
    startPatroni(nodes[1]!);
    await pollUntil(`${nodes[1]!.name} to stream as sync standby`, nodeReadyMs, () => restOk(nodes[1]!, "/sync"), 250).catch(withLog(nodes[1]!));
    log(`patroni up: leader ${nodes[0]!.name} :${nodes[0]!.pgPort}, sync standby ${nodes[1]!.name} :${nodes[1]!.pgPort}`);
    others.push(startHaproxy(dir, haproxyPort, nodes));
    const rw = `postgresql://postgres@127.0.0.1:${haproxyPort}/postgres`;
    // HAProxy starts with every server up until its checks mark one down (2 failed checks, 500 ms apart), and deals
    // connections to them in turn: until then one in two reaches the standby (a write is refused, a database just
    // created is not there yet). Ready when six connections in a row, each new, reach a primary that takes a write.
    let inRow = 0;
    await pollUntil("six connections in a row through HAProxy to the primary", 20_000, async () => {
      const c = new pg.Client({ connectionString: rw, connectionTimeoutMillis: 1_000 });
      c.on("error", () => {});
      try {
        await c.connect();
        await c.query("CREATE TABLE IF NOT EXISTS hf_failover_probe (at timestamptz NOT NULL)");
        inRow++;
      } catch (error) {
        inRow = 0;
        throw error;
      } finally {
        await c.end().catch(() => undefined);
      }
      return inRow >= 6;
    }, 100);
    log(`haproxy up on :${haproxyPort}`);
    // Transaction pooling in front of HAProxy; a failed login (no primary yet) is retried after 1 s, not 15.
    bouncer = await startPgBouncer(join(dir, "pgbouncer"), {
      upstreamHost: "127.0.0.1",
      upstreamPort: haproxyPort,
      poolMode: "transaction",
      defaultPoolSize: 10,
      serverLoginRetrySeconds: 1,
      queryWaitTimeoutSeconds: 5,
    });
    log(`pgbouncer up on :${bouncer.port}`);
  } catch (error) {
    await stop();
    throw error;
  }

  const byName = (name: string) => {
    const node = nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node named ${name} (nodes: ${nodes.map((n) => n.name).join(", ")})`);
    return node;
  };
  const url = (db: string, dbUser = "postgres") => `postgresql://${dbUser}@127.0.0.1:${haproxyPort}/${db}`;
  const leader = async () => {
    for (const node of nodes) if (await restOk(node, "/primary")) return node.name;
    throw new Error("no node is primary now (Patroni's /primary answers 200 on none): a failover is under way or the cluster is down");
  };

  return {
    nodes: nodes.map((n) => n.name),
    haproxyPort,
    pgbouncerPort: bouncer!.port,
    url,
    pooledUrl: (db, dbUser) => bouncer!.url(db, dbUser),
    nodeUrl: (name, db) => `postgresql://postgres@127.0.0.1:${byName(name).pgPort}/${db}`,
    leader,
    async killLeader() {
      const name = await leader();
      const node = byName(name);
      const survivor = nodes.find((n) => n !== node)!;
      const pm = postmasterPid(join(node.dir, "data"));
      const started = Date.now();
      patronis.get(name)?.kill();
      if (pm) killGroup(pm);
      log(`killed ${name} (patroni and postmaster ${pm ?? "?"})`);
      await pollUntil(`${survivor.name} to take over and accept a write through HAProxy`, 90_000, async () => (await restOk(survivor, "/primary")) && probeWrite(url("postgres")), 100);
      const failoverMs = Date.now() - started;
      log(`${survivor.name} leads after ${failoverMs} ms`);
      return { node: name, failoverMs };
    },
    async restartNode(name) {
      const node = byName(name);
      if (patronis.get(name)?.alive()) throw new Error(`${name}'s Patroni is still running; restartNode starts a killed node`);
      startPatroni(node);
      await pollUntil(`${name} to rejoin as streaming sync standby`, nodeReadyMs, () => restOk(node, "/sync"), 250).catch(withLog(node));
      log(`${name} rejoined as sync standby`);
    },
    stop,
  };
}

/** Adds the end of the node's Patroni log to a failure (the caller may remove `dir` before anyone reads it). */
function withLog(node: PatroniNode): (error: unknown) => never {
  return (error) => {
    let tail = "";
    try {
      tail = readFileSync(join(node.dir, "patroni.log"), "utf8").slice(-3_000);
    } catch {
      tail = "(no log)";
    }
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${node.name}'s Patroni log ends:\n${tail}`);
  };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

