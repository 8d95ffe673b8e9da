import { inTx } from "@holdfast/db";
import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LastOwnerError, setMemberRole, upsertMember } from "../src/people/auth/users";
import { NotFoundError } from "../src/base/errors";
import { membershipsLockOwners, membershipsSetRoleKeepingAnOwner } from "../src/store/sql/memberships";

/**
 * An organisation always keeps an owner (people/auth/users.ts setMemberRole): the last owner cannot be given another role,
 * and two owners demoting each other at the same moment leave one owner. Against the real PostgreSQL, with two
 * transactions at once.
 */
let t: TestDatabase;
const ids = {} as Record<"acme" | "olivia" | "oscar" | "eddie", string>;
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
const owners = async () => (await q("SELECT user_id FROM memberships WHERE org_id = $1 AND role = 'owner' ORDER BY user_id", [ids.acme])).map((r) => r.user_id);
const roleOf = async (userId: string) => (await q("SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2", [ids.acme, userId]))[0]?.role;

beforeAll(async () => {
  t = await createTestDatabase();
  ids.acme = (await q("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme') RETURNING id"))[0].id;
  ids.olivia = await upsertMember(t.db, { orgId: ids.acme, email: "olivia@acme.test", name: "Olivia", password: null, role: "owner" });
  ids.oscar = await upsertMember(t.db, { orgId: ids.acme, email: "oscar@acme.test", name: "Oscar", password: null, role: "owner" });
  ids.eddie = await upsertMember(t.db, { orgId: ids.acme, email: "eddie@acme.test", name: "Eddie", password: null, role: "editor" });
});
afterAll(async () => t?.drop());
beforeEach(async () => {
  await q("UPDATE memberships SET role = 'owner' WHERE org_id = $1 AND user_id = ANY($2)", [ids.acme, [ids.olivia, ids.oscar]]);
  await q("UPDATE memberships SET role = 'editor' WHERE org_id = $1 AND user_id = $2", [ids.acme, ids.eddie]);
});

describe("an organisation always keeps an owner", () => {
  it("changes roles while another owner remains, and refuses the last owner's demotion in words", async () => {
    await setMemberRole(t.db, ids.acme, ids.eddie, "viewer");
    expect(await roleOf(ids.eddie)).toBe("viewer");
    await setMemberRole(t.db, ids.acme, ids.olivia, "editor");
    expect(await owners()).toEqual([ids.oscar]);
    const refused = await setMemberRole(t.db, ids.acme, ids.oscar, "approver").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LastOwnerError);
    expect((refused as LastOwnerError).message).toBe("the organisation needs at least one owner: make someone else an owner first");
    expect(await owners()).toEqual([ids.oscar]);
    // The last owner may stay an owner (a repeated click), and anyone may be made an owner.
    await setMemberRole(t.db, ids.acme, ids.oscar, "owner");
    await setMemberRole(t.db, ids.acme, ids.eddie, "owner");
    expect(await owners()).toEqual([ids.oscar, ids.eddie].sort());
  });

  it("says a user who is not a member is not found, and changes nothing", async () => {
    const missing = await setMemberRole(t.db, ids.acme, `usr_${"0".repeat(32)}`, "viewer").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(await owners()).toEqual([ids.olivia, ids.oscar].sort());
  });

  it("two owners demoting each other at once leave one owner: the second change waits for the first and is refused", async () => {
    let releaseFirst = () => {};
    const held = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    // The first change takes the owner rows and demotes Olivia, then holds its transaction open.
    let firstDone = false;
    const first = inTx(t.db, async (tx) => {
      await membershipsLockOwners(tx, ids.acme);
      expect(await membershipsSetRoleKeepingAnOwner(tx, ids.acme, ids.olivia, "editor")).toBe(1);
      await held;
    }).then(() => {
      firstDone = true;
    });
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'memberships' AND l.granted AND l.mode = 'RowShareLock'"))[0].n >= 1);
    // The second demotes Oscar meanwhile: it must wait on the owner rows' lock until the first commits.
    const second = setMemberRole(t.db, ids.acme, ids.oscar, "editor").catch((e: unknown) => e);
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"))[0].n >= 1);
    expect(firstDone).toBe(false);
    releaseFirst();
    await first;
    expect(await second).toBeInstanceOf(LastOwnerError);
    expect(await owners()).toEqual([ids.oscar]);
    expect(await roleOf(ids.olivia)).toBe("editor");
  });

  it("two owners demoting each other with no help from the test, many times over, always leave exactly one owner", async () => {
    for (let round = 0; round < 15; round++) {
      await q("UPDATE memberships SET role = 'owner' WHERE org_id = $1 AND user_id = ANY($2)", [ids.acme, [ids.olivia, ids.oscar]]);
      const results = await Promise.allSettled([setMemberRole(t.db, ids.acme, ids.olivia, "viewer"), setMemberRole(t.db, ids.acme, ids.oscar, "viewer")]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const rejected = results.find((r) => r.status === "rejected");
      expect((rejected as PromiseRejectedResult).reason).toBeInstanceOf(LastOwnerError);
      expect(await owners()).toHaveLength(1);
    }
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the condition never held");
}
