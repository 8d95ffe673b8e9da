import { createRedis, type RedisClient, type RedisTarget } from "./connection";

export interface QueueConfig {
  /** A Redis server's URL or a Redis Cluster's seed nodes (redisTargetOf(env)). */
  redis: RedisTarget;
  /** Redis key prefix: one per deployment, one per test file. */
  prefix: string;
  /**
   * Connection errors of the queue's clients (they reconnect by themselves): without a listener BullMQ prints each
   * one, once per reconnect attempt. Processes pass their outage watch's `report` (core/ops/outage.ts).
   */
  onError?: (error: Error) => void;
}

export function redisConnection(
  target: RedisTarget,
  options: { failFast?: boolean; commandTimeoutMs?: number; name?: string } = {},
): RedisClient {
  // BullMQ's blocking commands need maxRetriesPerRequest: null. A publisher fails fast instead of queueing commands
  // while Redis is away: the relay's batch then rolls back at once rather than holding its rows until Redis is back.
  return createRedis(target, {
    maxRetriesPerRequest: options.failFast ? 1 : null,
    enableOfflineQueue: !options.failFast,
    enableReadyCheck: true,
    lazyConnect: false,
    ...(options.commandTimeoutMs ? { commandTimeout: options.commandTimeoutMs } : {}),
    ...(options.name ? { connectionName: options.name } : {}),
  });
}
