import { cpSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@holdfast/testkit/procs";
// @ts-expect-error: a plain ES module script (scripts/build.mjs), typed by use here
import { apps, buildEntry } from "../../../../scripts/build.mjs";

/** What the background processes and the CLI run from: their apps, the workspace packages and the migrations. */
const parts = ["apps/engine", "apps/relay", "apps/sweeper", "apps/lane-worker", "apps/mail-in", "packages/core", "packages/db", "packages/queue", "packages/cli", "prisma"];

/**
 * A copy of the source the soak's processes run from. Other engineers edit this checkout while a soak runs for half
 * an hour; a process restarted after a kill must not load a file caught half-written. Each package's node_modules
 * is copied as its links (relative, so @holdfast/* resolve inside the copy) and the root's is linked.
 */
export function snapshotSource(dir: string): string {
  const root = join(dir, "src");
  mkdirSync(root, { recursive: true });
  for (const part of parts) cpSync(join(repoRoot, part), join(root, part), { recursive: true, verbatimSymlinks: true });
  for (const file of ["package.json", "tsconfig.base.json"]) cpSync(join(repoRoot, file), join(root, file));
  symlinkSync(join(repoRoot, "node_modules"), join(root, "node_modules"));
  return root;
}

/** The folder of the snapshot's own build of the apps (apps/<app>/<folder>/main.mjs). */
export const snapshotBuild = "soak-build";

/**
 * Builds the snapshot's apps once (scripts/build.mjs, no source map): the soak starts some thirty processes and
 * restarts each one it kills, and a bundle started with plain node costs about a third of the CPU of tsx compiling
 * the sources at every start. Processes with a preload (the relays' queue faults) still run the sources.
 */
export async function buildSnapshot(root: string): Promise<string> {
  await Promise.all((apps as string[]).map((app) => buildEntry(`apps/${app}`, { folder: snapshotBuild, sourcemap: false, from: root })));
  return snapshotBuild;
}

/** The snapshot's CLI built like its apps (packages/cli/<snapshotBuild>/main.mjs): the upgrade's migrate starts it under load. */
export async function buildSnapshotCli(root: string): Promise<string> {
  await buildEntry("packages/cli", { folder: snapshotBuild, sourcemap: false, from: root });
  return join(root, "packages/cli", snapshotBuild, "main.mjs");
}
