import { readFileSync } from "node:fs";
import { join } from "node:path";
import { dumpSchema, migrationsDir, schemaDumpHeader, schemaDumpPath } from "@holdfast/db";
import { connectAs, createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * prisma/schema.sql is the schema a fresh `holdfast migrate` makes (the test template database is made by it): a
 * migration or a function file that changes the schema without the dump being written again fails here, and the
 * dump in the repository is what a reviewer reads.
 */

/** The lines one side has and the other lacks (at most 40), for a readable failure. */
function difference(expected: string, actual: string): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  const only = (x: string[], y: string[]) => {
    const rest = new Map<string, number>();
    for (const l of y) rest.set(l, (rest.get(l) ?? 0) + 1);
    return x.filter((l) => {
      const n = rest.get(l) ?? 0;
      if (n > 0) rest.set(l, n - 1);
      return n === 0;
    });
  };
  return [...only(a, b).map((l) => `- ${l}`), ...only(b, a).map((l) => `+ ${l}`)].slice(0, 40).join("\n");
}

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

describe("the checked-in schema dump", () => {
  it("is the migrated database's schema", async () => {
    const file = readFileSync(schemaDumpPath, "utf8");
    const live = schemaDumpHeader + (await dumpSchema(t.adminUrl));
    expect(live.length).toBeGreaterThan(10_000);
    expect(file === live, `prisma/schema.sql differs from the migrated database (- file, + database); run \`pnpm schema:dump\`:\n${difference(file, live)}`).toBe(true);
  });

  it("tells a changed database apart (a column more)", async () => {
    const owner = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
    try {
      await owner.query("ALTER TABLE runs ADD COLUMN schema_dump_probe int");
      const live = schemaDumpHeader + (await dumpSchema(t.adminUrl));
      expect(difference(readFileSync(schemaDumpPath, "utf8"), live)).toContain("schema_dump_probe");
    } finally {
      await owner.query("ALTER TABLE runs DROP COLUMN IF EXISTS schema_dump_probe");
      await owner.end();
    }
  });

  it("every table is described in prisma/schema.prisma", async () => {
    const prisma = readFileSync(join(migrationsDir, "../schema.prisma"), "utf8");
    const described = new Set([...prisma.matchAll(/@@map\("([a-z_]+)"\)/g)].map((m) => m[1]));
    const tables = (await t.sql.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows
      .map((r) => r.name)
      .filter((n) => n !== "_holdfast_migrations"); // the migration runner's own record
    expect(tables.length).toBeGreaterThan(20);
    expect(tables.filter((n) => !described.has(n))).toEqual([]);
  });
});
