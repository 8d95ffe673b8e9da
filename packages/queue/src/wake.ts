import { Redis } from "ioredis";

/**
 * Wake-ups for first steps over Redis pub/sub, in place of PostgreSQL's NOTIFY on the hot start path. A NOTIFY takes
 * a lock that every notifying transaction in the cluster holds from its commit's start to its end, flush included, so
 * starts that notify commit one at a time; and PostgreSQL signals every listening backend of the database at each
 * NOTIFY, each answering with a transaction. A starter that publishes here after its commit does neither.
 * A message is only a hint, at most once: a subscriber that hears one looks in the outbox (the record), and a message
 * lost (Redis away, a subscriber reconnecting, a starter that died after its commit) leaves the row to the relay's
 * poll after its grace, as a lost NOTIFY did.
 */

export interface WakeConfig {
  redisUrl: string;
  /** The deployment's Redis prefix (QUEUE_PREFIX): pub/sub channels are server-wide, whatever the database number. */
  prefix: string;
  onError?: (error: Error) => void;
  /** Each time the connection is (again) ready. */
  onReady?: () => void;
}

/** The channel a lane's ready steps are announced on. */
export const readyWakeChannel = (prefix: string, lane: string): string => `${prefix}:wake:ready:${lane}`;

export interface WakePublisher {
  /**
   * Whether a publish now would reach Redis. A starter that finds it false lets PostgreSQL NOTIFY instead: during a
   * Redis outage first steps still reach the lane workers that LISTEN.
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
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => 1_000 });
  redis.on("error", (error) => config.onError?.(error));
  redis.on("ready", () => config.onReady?.());
  return {
    get connected() {
      return redis.status === "ready";
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
        redis.publish(readyWakeChannel(config.prefix, lane), "").catch((error: Error) => config.onError?.(error));
      }
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

export interface WakeSubscription {
  close(): Promise<void>;
}

/**
 * Subscribes to the lanes' ready channels. `onWake` is called for every message, and after every (re)subscription:
 * what was announced while nobody listened is gone, so the caller looks in the outbox then too.
 */
export function subscribeReady(config: WakeConfig, lanes: readonly string[], onWake: (lane: string | null) => void): WakeSubscription {
  const channels = new Map(lanes.map((lane) => [readyWakeChannel(config.prefix, lane), lane]));
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null, retryStrategy: () => 1_000 });
  redis.on("error", (error) => config.onError?.(error));
  redis.on("message", (channel: string) => {
    const lane = channels.get(channel);
    if (lane !== undefined) onWake(lane);
  });
  let subscribedOnce = false;
  // ioredis subscribes again by itself after a reconnect; "ready" comes once it has.
  redis.on("ready", () => {
    if (subscribedOnce) onWake(null);
  });
  redis
    .subscribe(...channels.keys())
    .then(() => {
      subscribedOnce = true;
      onWake(null);
    })
    .catch((error: Error) => config.onError?.(error));
  return {
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
