import { cpSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@holdfast/testkit/procs";

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
