import { spawnSync } from "node:child_process";
import { join } from "node:path";

/** `holdfast <args>` from the soak's copy of the source: its exit code and output. */
export function holdfastCli(root: string, args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(root, "packages/cli/src/main.ts"), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 180_000,
  });
  return { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}
