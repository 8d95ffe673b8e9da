import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountKey, addressKey, createSignInThrottle, retryPhrase, throttleMessage } from "../src/people/auth/throttle";
import { sweepOnce } from "../src/run/sweeper/sweep";

let t: TestDatabase;
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

describe("throttle keys and messages", () => {
  it("an account is its normalised email, digested", () => {
    expect(accountKey(" Sam@Acme.test ")).toBe(accountKey("sam@acme.test"));
    expect(accountKey("sam@acme.test")).toMatch(/^[0-9a-f]{40}$/);
    expect(accountKey(`${"a".repeat(400)}@x.test`)).toHaveLength(40);
  });
  it("an address is its IPv4 address, or its IPv6 /64", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2::9")).toBe(addressKey("2001:0db8:0001:0002:ffff::1"));
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressKey(null)).toBe("unknown");
    expect(addressKey("not an address")).toBe("unknown");
  });
  it("says how long in plain words", () => {
    expect(retryPhrase(839)).toBe("14 minutes");
    expect(retryPhrase(60)).toBe("1 minute");
    expect(retryPhrase(61)).toBe("2 minutes");
    expect(retryPhrase(45)).toBe("45 seconds");
    expect(retryPhrase(0.2)).toBe("1 second");
    expect(throttleMessage({ kind: "blocked", scope: "account", retryAfterSeconds: 839 })).toBe(
      "Too many sign-in attempts for this account. Try again in 14 minutes.",
    );
    expect(throttleMessage({ kind: "blocked", scope: "address", retryAfterSeconds: 30 })).toBe(
      "Too many sign-in attempts from your network address. Try again in 30 seconds.",
    );
  });
});

describe("the sign-in throttle on PostgreSQL", () => {
  it("blocks an account after its failures, from any address, until the window passes; success clears it", async () => {
    const throttle = createSignInThrottle(t.sql, { perAccount: 3, perAddress: 100, windowSeconds: 2 });
    for (let i = 0; i < 3; i++) expect(await throttle.attempt("sam@acme.test", `198.51.100.${i}`)).toEqual({ kind: "allow" });
    const blocked = await throttle.attempt("sam@acme.test", "198.51.100.99");
    expect(blocked).toMatchObject({ kind: "blocked", scope: "account" });
    expect(blocked.kind === "blocked" && blocked.retryAfterSeconds).toBeLessThanOrEqual(2);
    // Another account from the same addresses is not affected.
    expect(await throttle.attempt("alex@acme.test", "198.51.100.0")).toEqual({ kind: "allow" });
    await new Promise((r) => setTimeout(r, 2_100));
    expect(await throttle.attempt("sam@acme.test", "198.51.100.99")).toEqual({ kind: "allow" });
    await throttle.succeeded("sam@acme.test", "198.51.100.99");
    expect(await q("SELECT count(*)::int AS n FROM signin_throttle WHERE key = $1", [`account:${accountKey("sam@acme.test")}`])).toEqual([{ n: 0 }]);
  });

  it("blocks an address trying many accounts; a successful sign-in gives its point back", async () => {
    const throttle = createSignInThrottle(t.sql, { perAccount: 100, perAddress: 4, windowSeconds: 60 });
    expect(await throttle.attempt("a@x.test", "192.0.2.1")).toEqual({ kind: "allow" });
    await throttle.succeeded("a@x.test", "192.0.2.1");
    for (let i = 0; i < 4; i++) expect(await throttle.attempt(`user${i}@x.test`, "192.0.2.1")).toEqual({ kind: "allow" });
    expect(await throttle.attempt("user9@x.test", "192.0.2.1")).toMatchObject({ kind: "blocked", scope: "address" });
    // A refused address does not count against the account it tried.
    expect(await q("SELECT count(*)::int AS n FROM signin_throttle WHERE key = $1", [`account:${accountKey("user9@x.test")}`])).toEqual([{ n: 0 }]);
    expect(await throttle.attempt("user9@x.test", "192.0.2.2")).toEqual({ kind: "allow" });
  });

  it("lapsed counters are purged by the sweeper an hour after they lapse", async () => {
    await q("DELETE FROM signin_throttle");
    await q(
      `INSERT INTO signin_throttle (key, points, expire) VALUES
         ('account:old', 5, (extract(epoch FROM now() - interval '2 hours') * 1000)::bigint),
         ('account:recent', 5, (extract(epoch FROM now() - interval '10 minutes') * 1000)::bigint),
         ('account:live', 5, (extract(epoch FROM now() + interval '10 minutes') * 1000)::bigint)`,
    );
    const swept = await sweepOnce(t.db, { staleSeconds: 3600, batchSize: 100, outboxRetentionSeconds: 3600 });
    expect(swept.throttlePurged).toBe(1);
    expect((await q("SELECT key FROM signin_throttle ORDER BY key")).map((r) => r.key)).toEqual(["account:live", "account:recent"]);
  });
});
