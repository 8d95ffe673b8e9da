import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureClusterPackages, type PgClusterHandle, type RedisClusterHandle, startPgCluster, startRedisCluster } from "@holdfast/testkit/cluster";
import { startTcpProxy, type TcpProxy } from "@holdfast/testkit";
import type { ClusterOutages, Failover } from "../faults/inject";
import type { ProcessKind } from "../fleet";

/**
 * The cluster soak's infrastructure (testkit's starters, docs/scaling.md's topology): 3 etcd members and 2
 * PostgreSQL nodes under Patroni behind HAProxy, PgBouncer in transaction mode in front of it, a 6-node Redis
 * Cluster. This file only adapts their handles to what the soak needs: the URLs each process kind gets, and the
 * outages (leader kill, master kill, one process's database path cut).
 */
export interface ClusterInfra {
  pg: PgClusterHandle;
  redis: RedisClusterHandle;
  /** The soak's database as its owner, through HAProxy (migrations, checks, the drain's queries). */
  adminUrl: string;
  /** The environment of one process by kind and label, over the fleet's common one. */
  envFor(kind: ProcessKind, label: string): Record<string, string>;
  outages: ClusterOutages;
  describe(): string;
  stop(): Promise<void>;
}

export const soakDatabase = "holdfast_soak";

/**
 * Starts everything; `cutLabel` names the process (a lane worker) whose database connections go through two
 * cuttable TCP proxies (one in front of PgBouncer, one in front of HAProxy), so the soak can take its network path
 * away without touching anyone else's.
 */
export async function startClusterInfra(dir: string, o: { cutLabel: string; seed: number; log: (line: string) => void }): Promise<ClusterInfra> {
  const { cutLabel, log } = o;
  await ensureClusterPackages();
  const stops: (() => Promise<unknown>)[] = [];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch((e: Error) => log(`cluster stop: ${e.message}`));
  };
  try {
    // Patroni and PostgreSQL run as the postgres OS user when we are root: they must be able to pass through the
    // soak's own directory (mkdtemp makes it 0700) to reach theirs.
    chmodSync(dir, 0o711);
    mkdirSync(join(dir, "pg-cluster"), { recursive: true });
    mkdirSync(join(dir, "redis-cluster"), { recursive: true });
    const pg = await startPgCluster(join(dir, "pg-cluster"), { log: (line) => log(`pg-cluster: ${line}`) });
    stops.push(() => pg.stop());
    // The soak's seed picks the master each kill takes, so a failing soak replays with the same kills.
    const redis = await startRedisCluster(join(dir, "redis-cluster"), { seed: o.seed });
    stops.push(() => redis.stop());
    const pooledProxy = await startTcpProxy({ host: "127.0.0.1", port: pg.pgbouncerPort });
    stops.push(() => pooledProxy.close());
    const directProxy = await startTcpProxy({ host: "127.0.0.1", port: pg.haproxyPort });
    stops.push(() => directProxy.close());
    return {
      pg,
      redis,
      adminUrl: pg.url(soakDatabase),
      envFor: (kind, label) => processEnv(pg, redis, kind, label === cutLabel ? { pooled: pooledProxy, direct: directProxy } : null),
      outages: outagesOf(pg, redis, cutLabel, [pooledProxy, directProxy]),
      describe: () => `PostgreSQL ${pg.nodes.join(", ")} (Patroni) behind HAProxy :${pg.haproxyPort} and PgBouncer :${pg.pgbouncerPort}; Redis Cluster ${redis.nodes}`,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Web and lane workers through PgBouncer (transaction mode), their LISTEN connections straight to HAProxy; engine,
 * relay, sweeper and mail-in to HAProxy (sessions kept). Every process on the Redis Cluster.
 */
export function processEnv(
  pg: Pick<PgClusterHandle, "url" | "pooledUrl">,
  redis: Pick<RedisClusterHandle, "nodes">,
  kind: ProcessKind,
  through: { pooled: Pick<TcpProxy, "urlFor">; direct: Pick<TcpProxy, "urlFor"> } | null,
): Record<string, string> {
  const pooled = (user: string) => (through ? through.pooled.urlFor(pg.pooledUrl(soakDatabase, user)) : pg.pooledUrl(soakDatabase, user));
  const direct = (user: string) => (through ? through.direct.urlFor(pg.url(soakDatabase, user)) : pg.url(soakDatabase, user));
  const env: Record<string, string> = { REDIS_CLUSTER_NODES: redis.nodes };
  if (kind === "web" || kind === "lane-worker") {
    Object.assign(env, { DATABASE_POOL_MODE: "transaction", DATABASE_URL: pooled("holdfast_worker"), DATABASE_DIRECT_URL: direct("holdfast_worker") });
    if (kind === "web") env.WEB_DATABASE_URL = pooled("holdfast_web");
  } else {
    Object.assign(env, { DATABASE_POOL_MODE: "session", DATABASE_URL: direct("holdfast_worker") });
  }
  return env;
}

function outagesOf(pg: PgClusterHandle, redis: RedisClusterHandle, cutLabel: string, proxies: TcpProxy[]): ClusterOutages {
  return {
    async failPostgres(): Promise<Failover> {
      const { node, failoverMs } = await pg.killLeader();
      return { service: "postgres", node, failoverMs };
    },
    async failRedis(): Promise<Failover> {
      const { port, failoverMs } = await redis.killMaster();
      return { service: "redis", node: String(port), failoverMs };
    },
    async recover(f) {
      if (f.service === "postgres") await pg.restartNode(f.node);
      else await redis.restartNode(Number(f.node));
    },
    cutTarget: { label: cutLabel, kind: "lane-worker" },
    async cut() {
      await Promise.all(proxies.map((p) => p.cut()));
    },
    async restore() {
      await Promise.all(proxies.map((p) => p.restore()));
    },
  };
}
