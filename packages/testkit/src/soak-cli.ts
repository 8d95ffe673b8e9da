import { spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./procs";

/**
 * Runs `pnpm soak` (bench/src/soak/main.ts) with `args` as a child, prints its report (the test's output is where a
 * failed soak is read), and returns its exit code and the `SOAK_RESULT <json>` line it printed last, parsed; throws
 * when there is none (the soak crashed or was killed).
 */
export async function runSoakCli<R>(args: string[]): Promise<{ code: number | null; result: R }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "bench/src/soak/main.ts"), ...args], { cwd: repoRoot, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  console.log(out.split("\n").filter((l) => !l.startsWith("SOAK_RESULT ")).join("\n"));
  const line = out.split("\n").find((l) => l.startsWith("SOAK_RESULT "));
  if (!line) throw new Error(`the soak printed no result (exit ${code})`);
  return { code, result: JSON.parse(line.slice("SOAK_RESULT ".length)) as R };
}
