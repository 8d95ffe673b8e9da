import { writeFileSync } from "node:fs";
import pg from "pg";
import { ensureDatabase, migrate } from "../src/migrate";
import { dumpSchema, schemaDumpHeader, schemaDumpPath } from "../src/schema-dump";

/**
 * Writes prisma/schema.sql from a fresh database migrated by `holdfast migrate`'s own runner (created and dropped
 * here). Run after adding a migration or changing a stored function's file: `pnpm schema:dump`.
 * packages/core/test/schema-dump.test.ts fails while the file and the migrated database differ.
 */
const admin = process.env.TEST_ADMIN_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const name = `hf_schema_dump_${process.pid}`;
const url = new URL(admin);
url.pathname = `/${name}`;
await ensureDatabase(url.toString());
try {
  await migrate(url.toString());
  writeFileSync(schemaDumpPath, schemaDumpHeader + (await dumpSchema(url.toString())));
  console.log(`wrote ${schemaDumpPath}`);
} finally {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.end();
}
