import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { migrate } from "@holdfast/db";
import pg from "pg";
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain ES module script (scripts/build.mjs), typed by use here
import { apps, buildEntry } from "../../../scripts/build.mjs";
import { testBuildVariable } from "./app-entry";

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

const repoRoot = join(import.meta.dirname, "../../..");

/**
 * The apps and the CLI built from the current source once for this run (scripts/build.mjs, into
 * apps/<app>/.test-build-<runTag> and packages/cli/.test-build-<runTag>), which the tests' processes start with plain
 * node (app-entry.ts). HOLDFAST_TEST_APPS=tsx skips it: every process then runs its TypeScript source through tsx
 * (source-mapped stack traces while debugging).
 */
const builtForTests = [...(apps as string[]).map((app) => `apps/${app}`), "packages/cli"];

async function buildAppsForRun(runTag: string): Promise<string | undefined> {
  if (process.env.HOLDFAST_TEST_APPS === "tsx") return undefined;
  const folder = `.test-build-${runTag}`;
  await Promise.all(builtForTests.map((dir) => buildEntry(dir, { folder, sourcemap: false })));
  return folder;
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
  const [folder] = await Promise.all([buildAppsForRun(runTag), migrate(url.toString())]);
  // The workers are forked after the global setup and inherit its environment.
  if (folder) process.env[testBuildVariable] = folder;
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
    rmSync(join(repoRoot, "apps/web", `.next-built-${runTag}`), { force: true });
    rmSync(join(repoRoot, "apps", `.dist-built-${runTag}`), { force: true });
    for (const dir of builtForTests) rmSync(join(repoRoot, dir, `.test-build-${runTag}`), { recursive: true, force: true });
  };
}
