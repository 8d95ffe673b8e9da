import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWakePublisher, subscribeReady } from "../src/wake";

/**
 * Announcements of first steps on Redis (wake.ts) against a Redis that refuses them: an ACL user without the wake
 * channels. Starts must fall back to NOTIFY (`connected` false) and a refused subscription must be tried again.
 */
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const user = `hf_wake_${randomBytes(4).toString("hex")}`;
const password = randomBytes(12).toString("hex");
const prefix = `hf-wake-test-${randomBytes(4).toString("hex")}`;
const admin = new Redis(redisUrl);
const asUser = () => {
  const url = new URL(redisUrl);
  url.username = user;
  url.password = password;
  return url.toString();
};

beforeAll(async () => {
  // Every command and key, no channel: what a user set up for BullMQ alone gets on Redis 7 (acl-pubsub-default).
  await admin.acl("SETUSER", user, "on", `>${password}`, "~*", "+@all", "resetchannels");
});
afterAll(async () => {
  await admin.acl("DELUSER", user);
  admin.disconnect();
});

const until = async (ok: () => boolean, ms = 10_000) => {
  for (let waited = 0; !ok() && waited < ms; waited += 50) await new Promise((r) => setTimeout(r, 50));
  return ok();
};

describe("announcements Redis refuses", () => {
  it("a refused publish makes the publisher not connected (starts NOTIFY), and connected again once publishing works", async () => {
    const errors: string[] = [];
    let readies = 0;
    const wake = createWakePublisher({ redis: asUser(), prefix, onError: (e) => errors.push(e.message), onReady: () => readies++ });
    expect(await wake.whenConnected(5_000)).toBe(true);
    expect(wake.connected).toBe(true);
    wake.ready(["io"]);
    expect(await until(() => errors.length > 0)).toBe(true);
    expect(errors[0]).toMatch(/NOPERM/);
    expect(wake.connected).toBe(false);
    await admin.acl("SETUSER", user, `&${prefix}:wake:*`);
    // The next publish is tried once the back-off is over; it goes through and says so.
    const before = readies;
    await new Promise((r) => setTimeout(r, 5_100));
    expect(wake.connected).toBe(true);
    wake.ready(["io"]);
    expect(await until(() => readies > before)).toBe(true);
    await wake.close();
    await admin.acl("SETUSER", user, "resetchannels");
  });

  it("a refused subscription is reported and tried again until Redis allows it; then announcements arrive", async () => {
    const errors: string[] = [];
    const woken: (string | null)[] = [];
    const sub = subscribeReady({ redis: asUser(), prefix, onError: (e) => errors.push(e.message) }, ["io"], (lane) => woken.push(lane));
    expect(await until(() => errors.length > 0)).toBe(true);
    expect(errors[0]).toMatch(/NOPERM/);
    expect(woken).toEqual([]);
    await admin.acl("SETUSER", user, `&${prefix}:wake:*`);
    expect(await until(() => woken.includes(null))).toBe(true);
    const wake = createWakePublisher({ redis: redisUrl, prefix });
    expect(await wake.whenConnected(5_000)).toBe(true);
    wake.ready(["io", "io", "human"]);
    expect(await until(() => woken.includes("io"))).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    // Once per lane announced, and only the lanes subscribed to.
    expect(woken.filter((l) => l !== null)).toEqual(["io"]);
    await wake.close();
    await sub.close();
  });

  it("a subscriber whose connection was cut subscribes again and says so (the caller looks in the outbox)", async () => {
    const woken: (string | null)[] = [];
    const name = `hf-wake-sub-${randomBytes(3).toString("hex")}`;
    const sub = subscribeReady({ redis: redisUrl, prefix, name }, ["io"], (lane) => woken.push(lane));
    expect(await until(() => woken.includes(null))).toBe(true);
    // Cut its connection from the server's side.
    const line = String(await admin.client("LIST")).split("\n").find((l) => l.includes(` name=${name} `));
    const id = line && /(?:^|\s)id=(\d+)/.exec(line)?.[1];
    expect(id).toBeTruthy();
    await admin.client("KILL", "ID", id as string);
    expect(await until(() => woken.filter((l) => l === null).length >= 2)).toBe(true);
    const wake = createWakePublisher({ redis: redisUrl, prefix });
    expect(await wake.whenConnected(5_000)).toBe(true);
    wake.ready(["io"]);
    expect(await until(() => woken.includes("io"))).toBe(true);
    await wake.close();
    await sub.close();
  });
});
