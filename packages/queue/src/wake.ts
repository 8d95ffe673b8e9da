import { Redis } from "ioredis";
import { createRedis, isCluster, nodeUrls, type RedisClient, type RedisTarget } from "./connection";

/**
 * Wake-ups for first steps over Redis pub/sub, in place of PostgreSQL's NOTIFY on the hot start path. A NOTIFY takes
 * a lock that every notifying transaction in the cluster holds from its commit's start to its end, flush included, so
 * starts that notify commit one at a time; and PostgreSQL signals every listening backend of the database at each
 * NOTIFY, each answering with a transaction. A starter that publishes here after its commit does neither.
 * A message is only a hint, at most once: a subscriber that hears one looks in the outbox (the record), and a message
 * lost (Redis away, a subscriber reconnecting, a starter that died after its commit) leaves the row to the relay's
 * poll after its grace, as a lost NOTIFY did.
 * Pub/sub channels are server-wide, whatever the database number: deployments that share a Redis need their own
 * QUEUE_PREFIX (their queues do too). A Redis ACL user needs the channels `<prefix>:wake:*` (PUBLISH, SUBSCRIBE).
 * On a Redis Cluster these are classic (not sharded) channels: a PUBLISH on any node reaches the subscribers of
 * every node, replicas included, so a subscriber needs one connection to any node and moves to the next when that
 * node dies, with no slot to follow. Sharded pub/sub (SPUBLISH, Redis 7.0) would spare the cluster bus the copy of
 * each message to every node, but its subscribers must follow the channel's slot through failovers; a few wake-ups a
 * second per lane do not need it.
 */

export interface WakeConfig {
  /** A Redis server's URL or a Redis Cluster's seed nodes (redisTargetOf(env)). */
  redis: RedisTarget;
  /** The deployment's Redis prefix (QUEUE_PREFIX). */
  prefix: string;
  onError?: (error: Error) => void;
  /** Each time announcements go through again: the connection is (again) ready, or a publish succeeded after failing. */
  onReady?: () => void;
  /** The connection's name in Redis's CLIENT LIST. */
  name?: string;
}

/** The channel a lane's ready steps are announced on. */
export const readyWakeChannel = (prefix: string, lane: string): string => `${prefix}:wake:ready:${lane}`;

/** After a publish failed, starts NOTIFY for this long before one tries Redis again. */
const failedPublishBackoffMs = 5_000;
/** A publish (or a quit) with no answer within this long has failed: a connection that died unseen looks ready. */
const commandTimeoutMs = 1_000;

/** QUIT waits for the commands written before it; a Redis that never answers must not hold the process. */
async function closeBounded(redis: RedisClient): Promise<void> {
  const quit = redis.quit().catch(() => undefined);
  await Promise.race([quit, new Promise((r) => setTimeout(r, commandTimeoutMs))]);
  redis.disconnect();
}

export interface WakePublisher {
  /**
   * Whether announcing on Redis is expected to work now: the connection is ready and no publish failed in the last
   * few seconds. A starter that finds it false lets PostgreSQL NOTIFY instead, so first steps still reach the lane
   * workers that LISTEN while Redis is away or refuses the publish (an ACL without the channel).
   */
  readonly connected: boolean;
  /** Resolves true once connected, false after `timeoutMs` without (a short-lived process's first start). */
  whenConnected(timeoutMs: number): Promise<boolean>;
  /** Tells each lane's subscribers that a step is ready. Never throws: a lost message costs the relay's grace. */
  ready(lanes: Iterable<string>): void;
  close(): Promise<void>;
}

export function createWakePublisher(config: WakeConfig): WakePublisher {
  // No offline queue: a publish while Redis is away fails at once instead of going out late, after the relay did.
  const redis = createRedis(config.redis, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: commandTimeoutMs,
    retryStrategy: () => 1_000,
    connectionName: config.name ?? "holdfast-wake-publish",
  });
  let failedAt: number | null = null;
  redis.on("error", (error) => config.onError?.(error));
  redis.on("ready", () => {
    failedAt = null;
    config.onReady?.();
  });
  return {
    get connected() {
      return redis.status === "ready" && (failedAt === null || Date.now() - failedAt > failedPublishBackoffMs);
    },
    whenConnected(timeoutMs) {
      if (redis.status === "ready") return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          redis.off("ready", onReady);
          resolve(false);
        }, timeoutMs);
        const onReady = () => {
          clearTimeout(timer);
          resolve(true);
        };
        redis.once("ready", onReady);
      });
    },
    ready(lanes) {
      for (const lane of new Set(lanes)) {
        redis.publish(readyWakeChannel(config.prefix, lane), "").then(
          () => {
            if (failedAt === null) return;
            failedAt = null;
            config.onReady?.();
          },
          (error: Error) => {
            failedAt = Date.now();
            config.onError?.(error);
          },
        );
      }
    },
    close: () => closeBounded(redis),
  };
}

export interface WakeSubscription {
  close(): Promise<void>;
}

/**
 * Subscribes to the lanes' ready channels. `onWake(lane)` for every message, and `onWake(null)` once each
 * (re)subscription is confirmed: what was announced while nobody listened is gone, so the caller looks in the outbox
 * then too. A subscription Redis refuses (an ACL without the channel) is tried again every few seconds, each refusal
 * reported to `onError`.
 */
export function subscribeReady(config: WakeConfig, lanes: readonly string[], onWake: (lane: string | null) => void): WakeSubscription {
  const channels = new Map(lanes.map((lane) => [readyWakeChannel(config.prefix, lane), lane]));
  // A server: one connection that reconnects by itself. A cluster: one node at a time; when its connection ends (the
  // node died) the next seed node is tried, as any node carries every classic channel.
  const urls = nodeUrls(config.redis);
  const rotate = isCluster(config.redis);
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let next = 0;
  const open = (): Redis => {
    // Subscribed by hand on every ready connection (not ioredis's autoResubscribe), so the look in the outbox comes
    // after Redis confirmed the subscription, never while it is still on its way.
    const redis = new Redis(urls[next++ % urls.length]!, {
      maxRetriesPerRequest: null,
      autoResubscribe: false,
      retryStrategy: rotate ? () => null : () => 1_000,
      connectionName: config.name ?? "holdfast-wake-subscribe",
    });
    redis.on("error", (error) => config.onError?.(error));
    redis.on("message", (channel: string) => {
      const lane = channels.get(channel);
      if (lane !== undefined) onWake(lane);
    });
    const subscribe = () => {
      if (closed || redis.status !== "ready") return;
      redis.subscribe(...channels.keys()).then(
        () => {
          config.onReady?.();
          onWake(null);
        },
        (error: Error) => {
          config.onError?.(error);
          if (!closed) retry = setTimeout(subscribe, 5_000);
        },
      );
    };
    redis.on("ready", subscribe);
    if (rotate) {
      redis.once("end", () => {
        if (closed) return;
        clearTimeout(retry);
        // Straight to the next node; a pause only once every node was tried, so a cluster that is all down is not hammered.
        retry = setTimeout(() => {
          current = open();
        }, next % urls.length === 0 ? 1_000 : 0);
      });
    }
    return redis;
  };
  let current = open();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await closeBounded(current);
    },
  };
}
