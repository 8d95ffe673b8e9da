import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { ensureClusterPackages } from "./install";

/**
 * A real Redis Cluster for tests: six redis-server processes (3 masters, 3 replicas) on free ports, each in its own
 * folder under `dir`. Failover is made quick with a small cluster-node-timeout so a test can kill masters and watch
 * the queues survive.
 */

export interface RedisClusterHandle {
  /** "127.0.0.1:p1,127.0.0.1:p2,..." for REDIS_CLUSTER_NODES (all six nodes). */
  nodes: string;
  ports: number[];
  /** The ports of the current masters (CLUSTER NODES). */
  masters(): Promise<number[]>;
  /** SIGKILL one master (seeded choice or the given port); resolves once a replica was promoted and the cluster
   *  reports cluster_state:ok again; returns the killed port and ms from kill to ok. */
  killMaster(port?: number): Promise<{ port: number; failoverMs: number }>;
  /** Start a killed node again (it rejoins as a replica). */
  restartNode(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** cluster-node-timeout: how long a silent master takes to be failed over (default 2000 ms). */
  nodeTimeoutMs?: number;
  /** Seed of the choice of master killMaster() makes when no port is given (default 45). */
  seed?: number;
}

const host = "127.0.0.1";
const run = promisify(execFile);

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** One CLUSTER NODES line, as much of it as the handle needs. */
interface NodeLine {
  id: string;
  port: number;
  master: boolean;
  failed: boolean;
  masterId: string;
  slots: boolean;
}

function parseNodesReply(text: string): NodeLine[] {
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id, addr, flags, masterId, , , , , ...slots] = line.split(" ");
      const fl = flags!.split(",");
      return {
        id: id!,
        port: Number(addr!.split("@")[0]!.split(":")[1]),
        master: fl.includes("master"),
        failed: fl.includes("fail") || fl.includes("fail?"),
        masterId: masterId!,
        slots: slots.length > 0,
      };
    });
}

/** Asks one node a question on a short-lived connection; undefined when the node does not answer. */
async function ask(port: number, ...command: [string, ...string[]]): Promise<string | undefined> {
  const r = new Redis({ host, port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 2_000 });
  r.on("error", () => {});
  try {
    await r.connect();
    return String(await r.call(...command));
  } catch {
    return undefined;
  } finally {
    r.disconnect();
  }
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} did not happen within ${timeoutMs} ms; see the redis.log files under the cluster's folder.`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const clusterOk = async (port: number) => (await ask(port, "CLUSTER", "INFO"))?.includes("cluster_state:ok") ?? false;

function writeConfig(nodeDir: string, port: number, busPort: number, nodeTimeoutMs: number): string {
  mkdirSync(nodeDir, { recursive: true });
  const conf = join(nodeDir, "redis.conf");
  writeFileSync(
    conf,
    [
      `port ${port}`,
      // The bus port is chosen too: port + 10000 (the default) may be past 65535 or taken.
      `cluster-port ${busPort}`,
      `bind ${host}`,
      "daemonize no",
      `dir ${nodeDir}`,
      `logfile ${join(nodeDir, "redis.log")}`,
      "cluster-enabled yes",
      "cluster-config-file nodes.conf",
      `cluster-node-timeout ${nodeTimeoutMs}`,
      // A replica may always take over, however long its link was down (restarted nodes included).
      "cluster-replica-validity-factor 0",
      "appendonly no",
      'save ""',
      "maxmemory-policy noeviction",
      "",
    ].join("\n"),
  );
  return conf;
}

export async function startRedisCluster(dir: string, options: RedisClusterOptions = {}): Promise<RedisClusterHandle> {
  await ensureClusterPackages();
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 2_000;
  let seed = options.seed ?? 45;
  const procs = new Map<number, ChildProcess>();
  const confs = new Map<number, string>();
  const ports: number[] = [];
  const taken = new Set<number>();
  const pick = async () => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  for (let i = 0; i < 6; i++) {
    const port = await pick();
    ports.push(port);
    confs.set(port, writeConfig(join(dir, `node-${port}`), port, await pick(), nodeTimeoutMs));
  }

  const launch = async (port: number) => {
    const proc = spawn("redis-server", [confs.get(port)!], { stdio: "ignore" });
    let failed: Error | undefined;
    proc.on("error", (error) => {
      failed = error;
    });
    procs.set(port, proc);
    proc.on("exit", () => {
      if (procs.get(port) === proc) procs.delete(port);
    });
    await until(`node ${port} answering PING`, 10_000, async () => {
      if (failed) throw new Error(`Redis Cluster: redis-server could not start (${failed.message}); install redis-server (7.0 or later).`);
      return (await ask(port, "PING")) === "PONG";
    });
  };
  const killAll = () => {
    for (const p of procs.values()) p.kill("SIGKILL");
  };
  process.once("exit", killAll);

  const nodesSeenBy = async (port: number) => parseNodesReply((await ask(port, "CLUSTER", "NODES")) ?? "");
  const alive = () => ports.filter((p) => procs.has(p));

  const stop = async () => {
    const waits = [...procs.values()].map((p) => new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r(null) : p.once("exit", r))));
    killAll();
    await Promise.all(waits);
    process.removeListener("exit", killAll);
  };

  try {
    await Promise.all(ports.map(launch));
    await run("redis-cli", ["--cluster", "create", ...ports.map((p) => `${host}:${p}`), "--cluster-replicas", "1", "--cluster-yes"], { timeout: 30_000 });
    // cluster_state:ok comes before every node has heard which node replicates which: wait for that too, or a
    // failover started early finds no replica of its victim.
    await until("cluster_state:ok on all six nodes, each seeing three masters with a replica each", 30_000, async () => {
      for (const p of ports) {
        if (!(await clusterOk(p))) return false;
        const view = await nodesSeenBy(p);
        const holders = view.filter((n) => n.master && n.slots);
        if (view.length < 6 || holders.length !== 3) return false;
        if (!holders.every((m) => view.some((n) => !n.master && n.masterId === m.id))) return false;
      }
      return true;
    });
  } catch (e) {
    await stop();
    throw e;
  }

  const masters = async () => {
    const view = await nodesSeenBy(alive()[0]!);
    return view.filter((n) => n.master && !n.failed && n.slots).map((n) => n.port).sort((a, b) => a - b);
  };

  const killMaster = async (port?: number) => {
    const current = await masters();
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const victim = port ?? current[seed % current.length]!;
    if (!current.includes(victim)) throw new Error(`Redis Cluster: ${victim} is not a master now (masters: ${current.join(", ")}).`);
    // Its replicas as the victim and the other nodes see them (a node that answers slowly is asked again).
    let replicas: number[] = [];
    await until(`the replicas of ${victim} known`, 10_000, async () => {
      const found = new Set<number>();
      for (const p of alive()) {
        const view = await nodesSeenBy(p);
        const victimId = view.find((n) => n.port === victim)?.id;
        for (const n of view) if (victimId && n.masterId === victimId && !n.master && !n.failed && alive().includes(n.port)) found.add(n.port);
      }
      replicas = [...found];
      return replicas.length > 0;
    });
    const started = Date.now();
    procs.get(victim)!.kill("SIGKILL");
    procs.delete(victim);
    await until(`a replica of ${victim} (${replicas.join(", ")}) promoted and cluster_state:ok`, 10 * nodeTimeoutMs + 10_000, async () => {
      const survivors = alive();
      const now = await nodesSeenBy(survivors[0]!);
      if (!now.some((n) => replicas.includes(n.port) && n.master && n.slots)) return false;
      for (const p of survivors) if (!(await clusterOk(p))) return false;
      return true;
    });
    return { port: victim, failoverMs: Date.now() - started };
  };

  const restartNode = async (port: number) => {
    if (procs.has(port)) throw new Error(`Redis Cluster: node ${port} is running; only a killed node can be restarted.`);
    // Its nodes.conf is kept, so it knows the cluster: it finds its slots taken over and becomes a replica.
    await launch(port);
    await until(`node ${port} rejoined as a replica`, 30_000, async () => {
      const self = (await nodesSeenBy(port)).find((n) => n.port === port);
      return Boolean(self && !self.master) && (await clusterOk(port)) && (await ask(port, "INFO", "replication"))?.includes("master_link_status:up") === true;
    });
  };

  return { nodes: ports.map((p) => `${host}:${p}`).join(","), ports, masters, killMaster, restartNode, stop };
}
