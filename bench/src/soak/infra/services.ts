import type { Outages } from "../faults/inject";
import type { ProcessKind } from "../fleet";
import { freePort } from "../testkit";
import { soakDatabase, startClusterInfra } from "./cluster";
import { startOwnPostgres } from "./postgres";
import { startOwnRedis } from "./redis";

/** What the soak runs on: one PostgreSQL and one Redis of its own, or (--cluster) the clustered topology. */
export interface Services {
  /** The soak's database as its owner. */
  adminUrl: string;
  /** REDIS_URL for every process (with a Redis Cluster the processes use REDIS_CLUSTER_NODES and ignore it). */
  redisUrl: string;
  envFor?: (kind: ProcessKind, label: string) => Record<string, string>;
  outages: Outages;
  describe: string;
}

/** The lane worker whose network path to the database the cluster soak cuts. */
export const cutLabel = "lane-io-1";

/** Starts the services; each one's stop goes on `cleanups` as soon as it runs. */
export async function startServices(
  o: { cluster: boolean; seed: number },
  dir: string,
  cleanups: (() => Promise<unknown> | unknown)[],
  log: (line: string) => void,
): Promise<Services> {
  if (o.cluster) {
    const c = await startClusterInfra(dir, { cutLabel, seed: o.seed, log });
    cleanups.push(() => c.stop());
    const noRestart = () => Promise.reject(new Error("the cluster soak restarts no single PostgreSQL or Redis: it fails them over"));
    return {
      adminUrl: c.adminUrl,
      redisUrl: `redis://127.0.0.1:${c.redis.ports[0]}`,
      envFor: c.envFor,
      outages: { restartPostgres: noRestart, restartRedis: noRestart, cluster: c.outages },
      describe: c.describe(),
    };
  }
  const [pgPort, redisPort] = [await freePort(), await freePort()];
  const postgres = await startOwnPostgres(dir, pgPort);
  cleanups.push(() => postgres.stop());
  const redis = await startOwnRedis(dir, redisPort);
  cleanups.push(() => redis.stop());
  return {
    adminUrl: postgres.url(soakDatabase),
    redisUrl: redis.url,
    outages: { restartPostgres: (ms) => postgres.restart(ms), restartRedis: (ms) => redis.restart(ms) },
    describe: `PostgreSQL :${pgPort}, Redis :${redisPort}`,
  };
}
