import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDb, createListenClient, createPool, type Db, migrate, type PoolMode, PooledConnectionError, sqlOf, urlAsRole } from "@holdfast/db";
import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { type PgBouncerHandle, startPgBouncer } from "@holdfast/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The web's row-level security scope through PgBouncer's transaction mode (DATABASE_POOL_MODE=transaction): with ONE
 * server connection shared by two web pools of different scopes, each sees only its own organisation's rows, whatever
 * the interleaving of single statements, named statements and transactions. Session mode through the same PgBouncer
 * (where its session-level scope would leak) is refused, as are LISTEN and migrations.
 */
let t: TestDatabase;
let bouncer: PgBouncerHandle;
let dir: string;
const org = { a: "", b: "" };

beforeAll(async () => {
  t = await createTestDatabase();
  const make = async (slug: string) => (await t.sql.query<{ id: string }>("INSERT INTO organisations (slug, name) VALUES ($1, $1) RETURNING id", [slug])).rows[0]?.id as string;
  org.a = await make("scope-a");
  org.b = await make("scope-b");
  for (const [o, n] of [[org.a, 3], [org.b, 2]] as const) {
    for (let i = 0; i < n; i++) await t.sql.query("INSERT INTO automations (org_id, slug, name) VALUES ($1, $2, $2)", [o, `aut-${i}`]);
  }
  dir = mkdtempSync(join(tmpdir(), "hf-pgb-scope-"));
  bouncer = await startPgBouncer(dir, { upstreamHost: "127.0.0.1", upstreamPort: 5432, poolMode: "transaction", defaultPoolSize: 1 });
});

afterAll(async () => {
  await bouncer?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await t?.drop();
});

const webPool = (orgId: string, poolMode: PoolMode): Db =>
  createDb(bouncer.url(t.name, "holdfast_web"), { poolSize: 2, scope: async () => ({ orgIds: [orgId] }), poolMode, applicationName: "scope-test" });

const orgsSeen = (rows: { org_id: string }[]) => [...new Set(rows.map((r) => r.org_id))];

describe("the web's scope through PgBouncer in transaction mode", () => {
  it("two pools of different scopes on one server connection each see only their own rows", async () => {
    const pools = { a: webPool(org.a, "transaction"), b: webPool(org.b, "transaction") };
    const seen: { who: "a" | "b"; orgs: string[]; n: number }[] = [];
    const single = async (who: "a" | "b") => {
      const rows = await pools[who].$queryRawUnsafe<{ org_id: string }[]>("SELECT org_id FROM automations");
      seen.push({ who, orgs: orgsSeen(rows), n: rows.length });
    };
    const named = async (who: "a" | "b") => {
      // A named statement (the starts' queryNamed): sent unnamed in transaction mode, scoped like the rest.
      const { rows } = await sqlOf(pools[who]).query<{ org_id: string }>({ name: "scope_test_read", text: "SELECT org_id FROM automations WHERE $1::int > 0", values: [1] });
      seen.push({ who, orgs: orgsSeen(rows), n: rows.length });
    };
    const transaction = async (who: "a" | "b") => {
      await pools[who].$transaction(async (tx) => {
        const first = await tx.$queryRawUnsafe<{ org_id: string }[]>("SELECT org_id FROM automations");
        await new Promise((r) => setTimeout(r, 5));
        const second = await tx.$queryRawUnsafe<{ org_id: string }[]>("SELECT org_id FROM automations");
        seen.push({ who, orgs: orgsSeen([...first, ...second]), n: first.length });
      });
    };
    const isolated = async (who: "a" | "b") => {
      // Prisma's SET TRANSACTION after BEGIN: the level is taken, and the scope still holds.
      const rows = await pools[who].$transaction((tx) => tx.$queryRawUnsafe<{ org_id: string }[]>("SELECT org_id FROM automations"), { isolationLevel: "RepeatableRead" });
      seen.push({ who, orgs: orgsSeen(rows), n: rows.length });
    };
    try {
      for (let round = 0; round < 15; round++) {
        await Promise.all([single("a"), transaction("b"), named("a"), single("b"), transaction("a"), named("b"), isolated(round % 2 ? "a" : "b")]);
      }
      // Sequential, the order that catches a setting left on the server connection: a, then b, then a again.
      for (const who of ["a", "b", "a", "b"] as const) await single(who);
    } finally {
      await Promise.all([pools.a.$disconnect(), pools.b.$disconnect()]);
    }
    expect(seen.filter((s) => s.who === "a").every((s) => s.orgs.join() === org.a && s.n === 3)).toBe(true);
    expect(seen.filter((s) => s.who === "b").every((s) => s.orgs.join() === org.b && s.n === 2)).toBe(true);
    expect(seen.length).toBe(15 * 7 + 4);
    // The one server connection carries no scope between transactions.
    const bare = createPool(bouncer.url(t.name, "holdfast_web"), { poolSize: 1, poolMode: "transaction" });
    const { rows } = await bare.query<{ orgs: string | null; n: number }>(
      "SELECT current_setting('holdfast.org_ids', true) AS orgs, (SELECT count(*)::int FROM automations) AS n",
    );
    await bare.end();
    expect(rows[0]?.n).toBe(0);
    expect(rows[0]?.orgs ?? "").toBe("");
    const servers = await bouncer.admin<{ database: string; user: string }>("SHOW SERVERS");
    expect(servers.filter((s) => s.database === t.name && s.user === "holdfast_web").length).toBe(1);
  });

  it("session mode through PgBouncer is refused in words, so its session-level scope can never leak; LISTEN and migrations likewise", async () => {
    const a = webPool(org.a, "session");
    try {
      // Without the check, a's connection would believe it still carried a's scope while the server connection behind
      // it had another pool's: the refusal comes before any row is read.
      await expect(a.$queryRawUnsafe("SELECT org_id FROM automations")).rejects.toThrow(/goes through a connection pooler.*DATABASE_POOL_MODE=transaction/);
    } finally {
      await a.$disconnect();
    }
    const listen = createListenClient(bouncer.url(t.name, "holdfast_worker"), "scope-test-listen");
    listen.on("error", () => {});
    await expect(listen.connect()).rejects.toBeInstanceOf(PooledConnectionError);
    await listen.end().catch(() => undefined);
    await expect(migrate(bouncer.url(t.name, "postgres"))).rejects.toThrow(/MIGRATE_DATABASE_URL/);
    // Direct to PostgreSQL, the same session-mode pool works as it always did.
    const direct = createDb(urlAsRole(t.url, "holdfast_web"), { poolSize: 1, scope: async () => ({ orgIds: [org.a] }), applicationName: "scope-test" });
    try {
      expect(orgsSeen(await direct.$queryRawUnsafe<{ org_id: string }[]>("SELECT org_id FROM automations"))).toEqual([org.a]);
    } finally {
      await direct.$disconnect();
    }
  });
});
