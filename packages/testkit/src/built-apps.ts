import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
// @ts-expect-error: a plain ES module script (scripts/build.mjs), typed by use here
import { buildApps } from "../../../scripts/build.mjs";
import { repoRoot } from "./procs";

/**
 * The production build of the background apps (scripts/build.mjs: apps/<app>/dist/main.mjs, what `pnpm start` and
 * the image run) once per `vitest run`, whichever test file needs it first: a lock directory, and a marker the others
 * wait for. Test files that run at the same time never rebuild dist under each other's processes.
 */
export async function ensureAppsBuilt(): Promise<void> {
  // Beside the dependencies, never among the apps (docs and tests read apps/ as the list of processes).
  const folder = join(repoRoot, "node_modules", ".cache", "holdfast");
  mkdirSync(folder, { recursive: true });
  const marker = join(folder, `dist-built-${inject("runTag")}`);
  const lock = join(folder, "dist-build.lock");
  for (;;) {
    if (existsSync(marker)) return;
    try {
      mkdirSync(lock);
    } catch {
      // A lock left by a killed run goes after 10 minutes; otherwise wait for the build in progress.
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 10 * 60_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      if (existsSync(marker)) return;
      await buildApps();
      writeFileSync(marker, new Date().toISOString());
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
