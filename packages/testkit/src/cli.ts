import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { cliEntry } from "./app-entry";
import { repoRoot } from "./procs";

/**
 * `pnpm holdfast <args>`: the real CLI process (the run's build, or tsx as the package script runs it: app-entry.ts) against this database, waited
 * for. `env` is added to the test's environment (undefined removes a setting).
 */
export function runCli(databaseUrl: string, args: string[], env: Record<string, string | undefined> = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...cliEntry(repoRoot), ...args], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env } as NodeJS.ProcessEnv,
    encoding: "utf8",
  });
}
