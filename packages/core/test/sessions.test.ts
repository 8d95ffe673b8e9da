import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revokeUserSessions, sessionUser, signIn, signOut } from "../src/people/auth/sessions";
import { upsertMember } from "../src/people/auth/users";
import { sweepOnce } from "../src/run/sweeper/sweep";

/**
 * Sessions: a new token on every sign-in (the previous one deleted), an absolute and an idle expiry judged by the
 * database clock, the idle expiry pushed forward on use at most once a minute, every session of a user ended by a
 * password change, expired rows purged by the sweeper. Time moves in SQL.
 */
let t: TestDatabase;
let orgId = "";
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
const pw = "a long enough password";
const hash = (token: string) => q("SELECT encode(sha256($1::bytea), 'hex') AS h", [token]).then((r) => r[0].h as string);

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await q("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme') RETURNING id"))[0].id;
  await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: pw, role: "owner" });
});
afterAll(async () => t?.drop());

describe("sessions", () => {
  it("are valid exactly while expires_at > now() AND idle_expires_at > now()", async () => {
    const s = await signIn(t.db, "sam@acme.test", pw, { days: 14, idleMinutes: 60 });
    if (!s) throw new Error("sign-in failed");
    const id = await hash(s.token);
    const [row] = await q(
      `SELECT expires_at - created_at AS life, idle_expires_at - created_at AS idle,
              expires_at > now() AND idle_expires_at > now() AS valid FROM sessions WHERE id = $1`,
      [id],
    );
    expect(row).toMatchObject({ life: { days: 14 }, idle: { hours: 1 }, valid: true });
    expect((await sessionUser(t.db, s.token))?.email).toBe("sam@acme.test");

    await q("UPDATE sessions SET idle_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    expect(await sessionUser(t.db, s.token)).toBeNull();
    await q("UPDATE sessions SET idle_expires_at = now() + interval '1 hour', expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    expect(await sessionUser(t.db, s.token)).toBeNull();
    await q("UPDATE sessions SET expires_at = now() + interval '1 day' WHERE id = $1", [id]);
    expect((await sessionUser(t.db, s.token))?.email).toBe("sam@acme.test");
  });

  it("push the idle expiry forward on use, at most once a minute, never past the absolute expiry", async () => {
    const s = await signIn(t.db, "sam@acme.test", pw, { days: 14, idleMinutes: 60 });
    if (!s) throw new Error("sign-in failed");
    const id = await hash(s.token);
    const idle = async () => (await q("SELECT idle_expires_at AS at FROM sessions WHERE id = $1", [id]))[0].at as Date;
    const first = await idle();
    await sessionUser(t.db, s.token, { idleMinutes: 60 });
    expect(await idle()).toEqual(first); // used within the minute: no write

    // Thirty minutes pass (in SQL): one use pushes the idle expiry to now() + 60 minutes.
    await q("UPDATE sessions SET idle_expires_at = now() + interval '30 minutes' WHERE id = $1", [id]);
    await sessionUser(t.db, s.token, { idleMinutes: 60 });
    const [pushed] = await q("SELECT extract(epoch FROM idle_expires_at - now())::float8 AS left FROM sessions WHERE id = $1", [id]);
    expect(pushed.left).toBeGreaterThan(3590);
    expect(pushed.left).toBeLessThanOrEqual(3600);

    // Ten minutes before the absolute end: the idle expiry stops at expires_at.
    await q("UPDATE sessions SET expires_at = now() + interval '10 minutes', idle_expires_at = now() + interval '5 minutes' WHERE id = $1", [id]);
    await sessionUser(t.db, s.token, { idleMinutes: 60 });
    expect(await q("SELECT idle_expires_at = expires_at AS capped FROM sessions WHERE id = $1", [id])).toEqual([{ capped: true }]);
  });

  it("rotate at sign-in: a new token each time, the request's previous session deleted", async () => {
    const a = await signIn(t.db, "sam@acme.test", pw);
    const b = await signIn(t.db, "sam@acme.test", pw, { previousToken: a?.token });
    expect(b?.token).not.toBe(a?.token);
    expect(await sessionUser(t.db, a?.token)).toBeNull();
    expect((await sessionUser(t.db, b?.token))?.email).toBe("sam@acme.test");
    expect(await q("SELECT count(*)::int AS n FROM sessions WHERE id = $1", [await hash(a?.token ?? "")])).toEqual([{ n: 0 }]);
    await signOut(t.db, b?.token ?? "");
    expect(await sessionUser(t.db, b?.token)).toBeNull();
  });

  it("all end when the password is set again; revokeUserSessions ends them too", async () => {
    const one = await signIn(t.db, "sam@acme.test", pw);
    const two = await signIn(t.db, "sam@acme.test", pw);
    await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: "a new long password", role: "owner" });
    expect(await sessionUser(t.db, one?.token)).toBeNull();
    expect(await sessionUser(t.db, two?.token)).toBeNull();
    expect(await signIn(t.db, "sam@acme.test", pw)).toBeNull();
    // Updating the membership without a password keeps sessions.
    const three = await signIn(t.db, "sam@acme.test", "a new long password");
    await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: null, role: "owner" });
    expect(await sessionUser(t.db, three?.token)).not.toBeNull();
    const userId = (await q("SELECT id FROM users WHERE email = 'sam@acme.test'"))[0].id;
    expect(await revokeUserSessions(t.db, userId)).toBeGreaterThanOrEqual(1);
    expect(await sessionUser(t.db, three?.token)).toBeNull();
    await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: pw, role: "owner" });
  });

  it("past either expiry are purged by the sweeper", async () => {
    await q("DELETE FROM sessions");
    const live = await signIn(t.db, "sam@acme.test", pw);
    const idle = await signIn(t.db, "sam@acme.test", pw);
    const old = await signIn(t.db, "sam@acme.test", pw);
    await q("UPDATE sessions SET idle_expires_at = now() - interval '1 minute' WHERE id = $1", [await hash(idle?.token ?? "")]);
    await q("UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE id = $1", [await hash(old?.token ?? "")]);
    const swept = await sweepOnce(t.db, { staleSeconds: 3600, batchSize: 100, outboxRetentionSeconds: 3600 });
    expect(swept.sessionsPurged).toBe(2);
    expect(await q("SELECT id FROM sessions")).toEqual([{ id: await hash(live?.token ?? "") }]);
    expect((await sweepOnce(t.db, { staleSeconds: 3600, batchSize: 100, outboxRetentionSeconds: 3600 })).sessionsPurged).toBe(0);
  });
});
