import { databaseSettingsProblem, listenUrl, migrateUrl } from "@holdfast/core/base";
import { describe, expect, it } from "vitest";
import { isOutOfConnectionSlots } from "../src/run/ops/connection-slots";

const pooled = { DATABASE_URL: "postgresql://holdfast_worker@pgbouncer:6432/holdfast", DATABASE_POOL_MODE: "transaction" as const };
const owner = (url: string) => url.replace("holdfast_worker", "postgres");

describe("database settings for PgBouncer's transaction mode", () => {
  it("a process that LISTENs needs DATABASE_DIRECT_URL, and one that leads elsewhere than the pooler", () => {
    expect(databaseSettingsProblem(pooled, "relay", true)).toMatch(/^DATABASE_POOL_MODE=transaction but DATABASE_DIRECT_URL is not set: the relay LISTENs .* Set DATABASE_DIRECT_URL/);
    expect(databaseSettingsProblem({ ...pooled, DATABASE_DIRECT_URL: "postgresql://holdfast_worker@pgbouncer:6432/holdfast" }, "relay", true)).toMatch(
      /same host and port as DATABASE_URL \(pgbouncer:6432\)/,
    );
    expect(databaseSettingsProblem({ ...pooled, DATABASE_DIRECT_URL: "postgresql://holdfast_worker@haproxy:5000/holdfast" }, "relay", true)).toBeNull();
    // Nothing to say without LISTEN, or in session mode.
    expect(databaseSettingsProblem(pooled, "web", false)).toBeNull();
    expect(databaseSettingsProblem({ ...pooled, DATABASE_POOL_MODE: "session" }, "relay", true)).toBeNull();
    expect(listenUrl({ ...pooled, DATABASE_DIRECT_URL: "postgresql://h@haproxy:5000/holdfast" })).toBe("postgresql://h@haproxy:5000/holdfast");
    expect(listenUrl(pooled)).toBe(pooled.DATABASE_URL);
  });

  it("migrations never go through the pooler: MIGRATE_DATABASE_URL, else DATABASE_DIRECT_URL, else a sentence", () => {
    expect(() => migrateUrl(pooled, owner)).toThrow(/migrations hold a session lock .* Set MIGRATE_DATABASE_URL \(or DATABASE_DIRECT_URL\)/);
    expect(() => migrateUrl({ ...pooled, MIGRATE_DATABASE_URL: "postgresql://postgres@pgbouncer:6432/holdfast" }, owner)).toThrow(/MIGRATE_DATABASE_URL leads to PgBouncer/);
    expect(migrateUrl({ ...pooled, DATABASE_DIRECT_URL: "postgresql://holdfast_worker@haproxy:5000/holdfast" }, owner)).toBe("postgresql://postgres@haproxy:5000/holdfast");
    expect(migrateUrl({ ...pooled, DATABASE_POOL_MODE: "session" }, owner)).toBe("postgresql://postgres@pgbouncer:6432/holdfast");
    expect(migrateUrl({ ...pooled, MIGRATE_DATABASE_URL: "postgresql://postgres@db:5432/holdfast" }, owner)).toBe("postgresql://postgres@db:5432/holdfast");
  });

  it("a refused connection slot is told apart from other outages, however it is wrapped", () => {
    expect(isOutOfConnectionSlots(Object.assign(new Error("sorry, too many clients already"), { code: "53300" }))).toBe(true);
    expect(isOutOfConnectionSlots({ message: "query failed", meta: { driverAdapterError: { cause: { message: 'too many connections for database "x"' } } } })).toBe(true);
    expect(isOutOfConnectionSlots(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }))).toBe(false);
  });
});
