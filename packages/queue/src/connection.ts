import { Cluster, Redis } from "ioredis";

/**
 * Where Redis is: one server's redis:// URL, or a Redis Cluster's seed nodes (ioredis finds the others from them).
 * Every Redis client of the queues, the wake-up channels and the checks is built here from one of these.
 */
export type RedisTarget = string | { clusterNodes: readonly ClusterNode[] };
export interface ClusterNode {
  host: string;
  port: number;
}
export type RedisClient = Redis | Cluster;

/** "host:port,host:port" (REDIS_CLUSTER_NODES, already checked by the settings' schema) as nodes. */
export function parseClusterNodes(list: string): ClusterNode[] {
  return list
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const at = item.lastIndexOf(":");
      const port = Number(item.slice(at + 1));
      if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65_535) {
        throw new Error(`REDIS_CLUSTER_NODES: "${item}" is not host:port; give the cluster's nodes as host:port,host:port`);
      }
      return { host: item.slice(0, at), port };
    });
}

/** The process's Redis from its settings: the cluster when REDIS_CLUSTER_NODES is set (REDIS_URL then unused). */
export function redisTargetOf(env: { REDIS_URL: string; REDIS_CLUSTER_NODES?: string | undefined }): RedisTarget {
  return env.REDIS_CLUSTER_NODES ? { clusterNodes: parseClusterNodes(env.REDIS_CLUSTER_NODES) } : env.REDIS_URL;
}

export const isCluster = (target: RedisTarget): target is { clusterNodes: readonly ClusterNode[] } => typeof target !== "string";

/** For the start-up log line: which Redis, without a password. */
export function describeRedisTarget(target: RedisTarget): string {
  if (isCluster(target)) return `Redis Cluster (seed nodes ${target.clusterNodes.map((n) => `${n.host}:${n.port}`).join(",")}; REDIS_URL is ignored)`;
  const url = new URL(target);
  url.password = "";
  url.username = "";
  return `Redis ${url.toString()}`;
}

/** The options Holdfast sets, in one shape for a server and a cluster. */
export interface ClientOptions {
  maxRetriesPerRequest?: number | null;
  enableOfflineQueue?: boolean;
  enableReadyCheck?: boolean;
  lazyConnect?: boolean;
  connectTimeout?: number;
  commandTimeout?: number;
  /** Ms before reconnecting (null: give up). For a cluster: reconnecting when no node answers. */
  retryStrategy?: (times: number) => number | null;
  connectionName?: string;
}

/**
 * A client for the target. A single server gets exactly these options (no extra round trip). A cluster takes the
 * offline queue, the ready check and the reconnecting at the cluster level and the rest for each node's connection.
 */
export function createRedis(target: RedisTarget, options: ClientOptions = {}): RedisClient {
  if (!isCluster(target)) return new Redis(target, options);
  const { retryStrategy, enableOfflineQueue, enableReadyCheck, lazyConnect, ...perNode } = options;
  return new Cluster(
    target.clusterNodes.map((n) => ({ host: n.host, port: n.port })),
    {
      ...(retryStrategy ? { clusterRetryStrategy: retryStrategy } : {}),
      ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
      ...(enableReadyCheck !== undefined ? { enableReadyCheck } : {}),
      ...(lazyConnect !== undefined ? { lazyConnect } : {}),
      redisOptions: perNode,
    },
  );
}

/** Every node that holds or may come to hold queue keys: a server itself; a cluster's masters and replicas (a replica becomes a master in a failover). */
export function nodesOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes("all") : [client];
}

/** Each seed node as a redis:// URL (a cluster), or the URL itself: where a plain connection can go. */
export function nodeUrls(target: RedisTarget): string[] {
  return isCluster(target) ? target.clusterNodes.map((n) => `redis://${n.host}:${n.port}`) : [target];
}
