import { Writable } from "node:stream";
import { createDb, createPool } from "@holdfast/db";
import { redisConnection } from "@holdfast/queue";
import { createTestDatabase, startTcpProxy, type TcpProxy, type TestDatabase, testRedisUrl, waitFor } from "@holdfast/testkit";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isOutOfConnectionSlots } from "../src/run/ops/connection-slots";
import { connectionFailureOf, isDatabaseUnreachable, Outages } from "../src/run/ops/outage";

/**
 * The outage watch against real failures: PostgreSQL and Redis reached through a TCP proxy this file cuts and
 * restores (the real services keep running for everyone else). No error here is made up.
 */
let t: TestDatabase;
let pgProxy: TcpProxy;
let redisProxy: TcpProxy;

beforeAll(async () => {
  t = await createTestDatabase();
  const u = new URL(t.url);
  pgProxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
  const r = new URL(testRedisUrl);
  redisProxy = await startTcpProxy({ host: r.hostname, port: Number(r.port || 6379) });
});
afterAll(async () => {
  await pgProxy?.close();
  await redisProxy?.close();
  await t?.drop();
});

/** A logger whose lines the test reads. */
function memoryLog() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: "debug" }, stream), lines };
}

const caught = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
};

describe("which errors are a lost connection", () => {
  it("refused, reset and terminated connections through Prisma and pg are the database; SQL errors are not", async () => {
    const db = createDb(pgProxy.urlFor(t.url), { poolSize: 2, onConnectionError: () => {} });
    const pool = createPool(pgProxy.urlFor(t.url), { poolSize: 2 });
    try {
      await db.$queryRawUnsafe("SELECT 1");
      const midQuery = [caught(db.$queryRawUnsafe("SELECT pg_sleep(3)")), caught(db.$transaction(async (tx) => tx.$queryRawUnsafe("SELECT pg_sleep(3)"))), caught(pool.query("SELECT pg_sleep(3)"))];
      await new Promise((r) => setTimeout(r, 300));
      await pgProxy.cut();
      const reset = await Promise.all(midQuery);
      const refused = [await caught(db.$queryRawUnsafe("SELECT 1")), await caught(db.$transaction(async (tx) => tx.$queryRawUnsafe("SELECT 1"))), await caught(pool.query("SELECT 1"))];
      expect([...reset, ...refused].map(isDatabaseUnreachable)).toEqual([true, true, true, true, true, true]);
      // Prisma's errors name the database; pg's bare socket errors could be either service.
      expect(refused.map(connectionFailureOf)).toEqual(["database", "database", "network"]);
      await pgProxy.restore();

      // Both pools open new connections by themselves once it is back.
      expect(await db.$queryRawUnsafe("SELECT 1 AS back")).toEqual([{ back: 1 }]);
      expect((await pool.query("SELECT 1 AS back")).rows).toEqual([{ back: 1 }]);

      const unique = await caught(db.$executeRawUnsafe("INSERT INTO leader_leases (name, owner, lease_until) VALUES ('x', 'a', now()), ('x', 'b', now())"));
      const syntax = await caught(pool.query("SELECT 1/0"));
      expect([unique, syntax, new Error("boom"), null, "ECONNREFUSED"].map(connectionFailureOf)).toEqual([null, null, null, null, null]);
      // A server restart ends sessions with 57P01, and refuses new ones with 57P03 while it starts.
      expect(connectionFailureOf(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe("database");
      // A failover: a write that reached a read-only server (a standby, or a leader still promoting) behind the primary's address.
      expect(connectionFailureOf(Object.assign(new Error("cannot execute SELECT in a read-only transaction"), { code: "25006" }))).toBe("database");
    } finally {
      await db.$disconnect();
      await pool.end();
    }
  });

  it("every connection slot taken (53300, too many connections) is the database out of reach, through Prisma and pg", async () => {
    // The database's own limit, filled for real: superuser connections count but are let in, everyone else is refused.
    const admin = createPool(t.adminUrl, { poolSize: 1 });
    const fill = createPool(t.adminUrl, { poolSize: 2 });
    const fillers = await Promise.all([fill.connect(), fill.connect()]);
    await admin.query(`ALTER DATABASE ${t.name} CONNECTION LIMIT 1`);
    const db = createDb(t.url, { poolSize: 1, onConnectionError: () => {} });
    const pool = createPool(t.url, { poolSize: 1 });
    try {
      const refused = [await caught(db.$queryRawUnsafe("SELECT 1")), await caught(pool.query("SELECT 1"))];
      expect(refused.map((e) => String((e as Error)?.message ?? e))).toEqual([expect.stringMatching(/too many connections/), expect.stringMatching(/too many connections/)]);
      expect(refused.map(connectionFailureOf)).toEqual(["database", "database"]);
      expect(connectionFailureOf(Object.assign(new Error("sorry, too many clients already"), { code: "53300" }))).toBe("database");
      // Freed: both go on without being made again.
      await admin.query(`ALTER DATABASE ${t.name} CONNECTION LIMIT -1`);
      expect(await db.$queryRawUnsafe("SELECT 1 AS back")).toEqual([{ back: 1 }]);
      expect((await pool.query("SELECT 1 AS back")).rows).toEqual([{ back: 1 }]);
    } finally {
      await admin.query(`ALTER DATABASE ${t.name} CONNECTION LIMIT -1`);
      for (const c of fillers) c.release();
      await fill.end();
      await admin.end();
      await db.$disconnect();
      await pool.end();
    }
  });

  it("an idle pooled connection that dies does not end the process, and the pool goes on", async () => {
    const seen: Error[] = [];
    const pool = createPool(pgProxy.urlFor(t.url), { poolSize: 2, onConnectionError: (e) => seen.push(e) });
    const silent = createPool(pgProxy.urlFor(t.url), { poolSize: 2 });
    try {
      await Promise.all([pool.query("SELECT 1"), silent.query("SELECT 1")]);
      expect(pool.idleCount + silent.idleCount).toBe(2);
      await pgProxy.cut();
      await waitFor(async () => seen.length > 0, 5_000, "the idle client's error");
      expect(seen.every(isDatabaseUnreachable)).toBe(true);
      await pgProxy.restore();
      // Without a listener, the 'error' of `silent`'s idle client would have thrown out of this process.
      expect((await silent.query("SELECT 2 AS n")).rows).toEqual([{ n: 2 }]);
    } finally {
      await pgProxy.restore();
      await Promise.all([pool.end(), silent.end()]);
    }
  });

  it("Redis commands on a lost connection are redis", async () => {
    const redis = redisConnection(redisProxy.urlFor(testRedisUrl), { failFast: true });
    redis.on("error", () => {});
    try {
      await new Promise((r) => redis.once("ready", r));
      await redis.ping();
      await redisProxy.cut();
      await new Promise((r) => setTimeout(r, 200));
      expect(connectionFailureOf(await caught(redis.ping()))).toBe("redis");
    } finally {
      await redisProxy.restore();
      redis.disconnect();
    }
  });
});

describe("a refusal for want of a connection slot", () => {
  it("is found anywhere in the error's chain, by SQLSTATE or by PostgreSQL's words, and nothing else is", () => {
    const pgRefusal = Object.assign(new Error("sorry, too many clients already"), { code: "53300" });
    expect(isOutOfConnectionSlots(pgRefusal)).toBe(true);
    expect(isOutOfConnectionSlots(new Error("query failed", { cause: new Error("wrapped", { cause: pgRefusal }) }))).toBe(true);
    expect(isOutOfConnectionSlots({ code: "P1001", meta: { driverAdapterError: { message: "remaining connection slots are reserved for superuser" } } })).toBe(true);
    expect(isOutOfConnectionSlots(new AggregateError([new Error("connect ECONNREFUSED"), pgRefusal]))).toBe(true);
    expect(isOutOfConnectionSlots(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    const cyclic: { message: string; cause?: unknown } = { message: "loop" };
    cyclic.cause = cyclic;
    expect(isOutOfConnectionSlots(cyclic)).toBe(false);
  });
});

describe("the outage watch", () => {
  it("says once that the database is down and once that it is back, however many queries failed; loops wait for it", async () => {
    const { log, lines } = memoryLog();
    const db = createDb(pgProxy.urlFor(t.url), { poolSize: 2, onConnectionError: (e) => outages.report(e) });
    const outages = new Outages({ log, services: [{ service: "database", probe: () => db.$queryRawUnsafe("SELECT 1") }], checkEveryMs: 0, retryEveryMs: 200 });
    try {
      await db.$queryRawUnsafe("SELECT 1");
      // A lost connection while the database answers is no outage: nothing above debug.
      expect(outages.report(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true);
      await outages.whenUp();
      expect(lines.filter((l) => (l.level as number) >= 30)).toEqual([]);

      await pgProxy.cut();
      const failures = await Promise.all(Array.from({ length: 50 }, () => caught(db.$queryRawUnsafe("SELECT 1"))));
      expect(failures.map((e) => outages.report(e)).every(Boolean)).toBe(true);
      expect(outages.report(new Error("some other failure"))).toBe(false);
      await waitFor(async () => outages.isDown("database"), 5_000, "the watch to see the outage");
      let resumed = false;
      const waiting = outages.whenUp().then(() => (resumed = true));
      await new Promise((r) => setTimeout(r, 700)); // several retries while it is down
      for (const e of failures.slice(0, 10)) outages.report(e);
      expect(resumed).toBe(false);

      await pgProxy.restore();
      await waiting;
      expect(outages.isDown()).toBe(false);
      const said = lines.filter((l) => (l.level as number) >= 30);
      expect(said.map((l) => [l.outage, l.service])).toEqual([
        ["down", "database"],
        ["up", "database"],
      ]);
      expect(String(said[0]?.msg)).toMatch(/^database unreachable \(.+\): work waits and resumes by itself when it is back$/);
      expect(said[1]?.downMs).toBeGreaterThan(500);
    } finally {
      outages.stop();
      await pgProxy.restore();
      await db.$disconnect();
    }
  });

  it("a periodic check notices an outage in an idle process", async () => {
    const { log, lines } = memoryLog();
    const redis = redisConnection(redisProxy.urlFor(testRedisUrl), { failFast: true });
    redis.on("error", () => {});
    await new Promise((r) => redis.once("ready", r));
    const outages = new Outages({ log, services: [{ service: "redis", probe: () => redis.ping() }], checkEveryMs: 100, retryEveryMs: 100 }).start();
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(outages.isDown()).toBe(false);
      await redisProxy.cut();
      await waitFor(async () => outages.isDown("redis"), 5_000, "the periodic check to see the outage");
      await redisProxy.restore();
      await waitFor(async () => !outages.isDown(), 10_000, "redis back");
      expect(lines.filter((l) => (l.level as number) >= 30).map((l) => l.outage)).toEqual(["down", "up"]);
    } finally {
      outages.stop();
      await redisProxy.restore();
      redis.disconnect();
    }
  });
});
