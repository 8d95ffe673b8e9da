import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { migrationsDir } from "./migrate";

/** The checked-in dump of a freshly migrated database (tables, indexes, constraints, functions, triggers, policies, grants). */
export const schemaDumpPath = join(migrationsDir, "../schema.sql");

/**
 * The database's schema as `pg_dump --schema-only --no-owner` writes it, without what changes from one dump to the
 * next or one machine to another: pg_dump's banner and per-object comment headers, its session SET lines and
 * \restrict keys, and the migrating role's name in default privileges.
 */
export function normaliseDump(dump: string): string {
  const kept = dump
    .split("\n")
    .filter((line) => !/^--( Name: | PostgreSQL database dump| Dumped (from|by) |$)/.test(line))
    .filter((line) => !/^\\(un)?restrict\b/.test(line))
    .filter((line) => !/^SET \w+ = /.test(line) && !line.startsWith("SELECT pg_catalog.set_config('search_path'"))
    .map((line) => line.replace(/^(ALTER DEFAULT PRIVILEGES FOR ROLE )\S+/, "$1<migrator>").replace(/\s+$/, ""));
  return `${kept.join("\n").replace(/\n{3,}/g, "\n\n").trim()}\n`;
}

/** The file's first lines (then the normalised dump). */
export const schemaDumpHeader =
  "-- The schema of a freshly migrated database (prisma/migrations, then packages/core/src/store/sql/functions), written by\n" +
  "-- `pnpm schema:dump` from pg_dump --schema-only --no-owner. Do not edit: change a migration or a function file and\n" +
  "-- dump again. packages/core/test/schema-dump.test.ts fails while this file and the migrated database differ.\n\n";

/** Dumps the schema of the database at `url` (pg_dump from PATH, the server's major version or newer). */
export async function dumpSchema(url: string): Promise<string> {
  const { stdout } = await promisify(execFile)("pg_dump", ["--schema-only", "--no-owner", `--dbname=${url}`], { maxBuffer: 64 * 1024 * 1024 });
  return normaliseDump(stdout);
}
