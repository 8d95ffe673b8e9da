import { describeRedisTarget, type RedisTarget, redisTargetOf } from "@holdfast/queue";
import type { Logger } from "../../base/log";

/**
 * The process's Redis from its settings (a server's URL, or a cluster's seed nodes when REDIS_CLUSTER_NODES is set).
 * With a cluster it says once that REDIS_URL is not used, so a REDIS_URL left in the environment misleads nobody.
 */
export function redisTargetAtStart(env: { REDIS_URL: string; REDIS_CLUSTER_NODES?: string | undefined }, log: Logger): RedisTarget {
  const target = redisTargetOf(env);
  if (typeof target !== "string") log.info(`queues and wake-ups on ${describeRedisTarget(target)}`);
  return target;
}
