import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export const testRedisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A BullMQ key prefix of this test file's own; `clear` removes its keys. */
export function createTestPrefix(): { prefix: string; clear(): Promise<void> } {
  const prefix = `hf_t_${randomBytes(4).toString("hex")}`;
  return {
    prefix,
    async clear() {
      const redis = new Redis(testRedisUrl);
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== "0");
      redis.disconnect();
    },
  };
}
