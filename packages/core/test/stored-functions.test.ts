import { functionFiles, migrate } from "@holdfast/db";
import { connectAs, createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Each stored function's live body is its file under core/src/sql/functions; `holdfast migrate` applies the files
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
