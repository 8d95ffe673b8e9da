import { functionFiles, migrate } from "@holdfast/db";
import { newRunId, newStepId } from "../src/run/apply/rows";
import { connectAs, createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Each stored function's live body is its file under core/src/store/sql/functions; `holdfast migrate` applies the files
// after the migrations, every time.

const definitions = `SELECT p.proname AS name, p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS def,
    p.proacl::text AS acl
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 2`;

let t: TestDatabase;
let admin: Awaited<ReturnType<typeof connectAs>>;
beforeAll(async () => {
  t = await createTestDatabase();
  admin = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
});
afterAll(async () => {
  await admin.end();
  await t.drop();
});

describe("stored functions live in their files", () => {
  it("has one file per function in the migrated database, named after it, and no file for a function that is gone", async () => {
    const { rows } = await admin.query<{ name: string; signature: string }>(definitions);
    const files = functionFiles();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => `${r.name.replace(/^holdfast_/, "")}.sql`).sort()).toEqual(files.map((f) => f.name));
    expect(new Set(rows.map((r) => r.name)).size, "no overloads: a file holds one definition").toBe(rows.length);
    for (const f of files) {
      const defines = [...f.sql.matchAll(/CREATE OR REPLACE FUNCTION (holdfast_\w+)\s*\(/g)].map((m) => m[1]);
      expect(defines, f.name).toEqual([`holdfast_${f.name.replace(/\.sql$/, "")}`]);
      expect(f.sql, `${f.name} redefines with CREATE OR REPLACE only`).not.toMatch(/CREATE FUNCTION/);
    }
  });

  it("re-applying the files changes no definition, owner or grant (the template was migrated with them)", async () => {
    const before = (await admin.query(definitions)).rows;
    const result = await migrate(t.adminUrl);
    expect(result.applied).toEqual([]);
    expect(result.functions).toEqual(functionFiles().map((f) => f.name));
    expect((await admin.query(definitions)).rows).toEqual(before);
  });

  it("migrate puts back a body changed outside the files", async () => {
    const body = async () =>
      (await admin.query<{ def: string }>("SELECT pg_get_functiondef('holdfast_scope_all()'::regprocedure) AS def")).rows[0]?.def;
    const live = await body();
    await admin.query(`CREATE OR REPLACE FUNCTION holdfast_scope_all() RETURNS boolean LANGUAGE sql STABLE AS $$ SELECT true $$`);
    expect(await body()).not.toEqual(live);
    await migrate(t.adminUrl);
    expect(await body()).toEqual(live);
    expect(live).toContain("holdfast.all_orgs");
  });
});

describe("time-ordered ids (holdfast_ordered_id, and the engine's in run/apply/rows.ts)", () => {
  it("are the defaults of runs, steps and timers: the prefix, the database clock's milliseconds, version 7, ascending", async () => {
    const defaults = await admin.query<{ table: string; expr: string }>(
      `SELECT c.relname AS table, pg_get_expr(d.adbin, d.adrelid) AS expr FROM pg_attrdef d
       JOIN pg_class c ON c.oid = d.adrelid JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
       WHERE a.attname = 'id' AND c.relname IN ('runs', 'steps', 'timers') ORDER BY 1`,
    );
    expect(defaults.rows.map((r) => [r.table, r.expr.replace("::text", "")])).toEqual([
      ["runs", "holdfast_ordered_id('run_')"],
      ["steps", "holdfast_ordered_id('stp_')"],
      ["timers", "holdfast_ordered_id('tmr_')"],
    ]);
    const made: { id: string; ms: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await admin.query<{ id: string; ms: string }>(
        "SELECT holdfast_ordered_id('tmr_') AS id, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS ms, pg_sleep(0.002)",
      );
      made.push(r.rows[0] as { id: string; ms: string });
    }
    for (const { id, ms } of made) {
      expect(id).toMatch(/^tmr_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
      expect(Math.abs(Number.parseInt(id.slice(4, 16), 16) - Number(ms))).toBeLessThanOrEqual(1);
    }
    const ids = made.map((m) => m.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("the engine's run and step ids have the same layout and ascend within a process, many to a millisecond", () => {
    const ids = Array.from({ length: 2000 }, () => newStepId());
    const before = Date.now();
    const run = newRunId();
    expect(run).toMatch(/^run_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(Number.parseInt(run.slice(4, 16), 16)).toBeGreaterThanOrEqual(before);
    for (const id of ids) expect(id).toMatch(/^stp_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
