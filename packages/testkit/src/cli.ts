import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./procs";

/**
 * `pnpm holdfast <args>`: the real CLI process (tsx, as the package script runs it) against this database, waited
 * for. `env` is added to the test's environment (undefined removes a setting).
 */
export function runCli(databaseUrl: string, args: string[], env: Record<string, string | undefined> = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ["--import", "tsx", join(repoRoot, "packages/cli/src/main.ts"), ...args], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env } as NodeJS.ProcessEnv,
    encoding: "utf8",
  });
}
