import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { migrate } from "@holdfast/db";
import pg from "pg";
import type { TestProject } from "vitest/node";

/**
 * Once per `vitest run`: a freshly migrated template database. Each test file clones it (CREATE DATABASE ...
 * TEMPLATE), so files run in parallel on their own data. Names are unique per run, so two runs on one machine
 * (a developer and CI) do not collide.
 */
export const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

declare module "vitest" {
  export interface ProvidedContext {
    templateDb: string;
    runTag: string;
  }
}

export default async function setup(project: TestProject) {
  const runTag = randomBytes(3).toString("hex");
  const templateDb = `hf_tpl_${runTag}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${templateDb}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${templateDb}`;
  await migrate(url.toString());
  project.provide("templateDb", templateDb);
  project.provide("runTag", runTag);

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const { rows } = await c.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2",
      [`hf_t_${runTag}_%`, templateDb],
    );
    for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await c.end();
    rmSync(join(import.meta.dirname, "../../../apps/web", `.next-built-${runTag}`), { force: true });
  };
}
