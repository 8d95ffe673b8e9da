import { spawn } from "node:child_process";

/** Runs a command to its end; rejects with its output when it fails. */
export function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(" ")} exited ${code ?? signal}:\n${out}`));
    });
  });
}

/** PostgreSQL refuses to run as root: as root, its commands run as this OS user instead. */
export function asUser(user: string | null, command: string, args: string[]): [string, string[]] {
  return user ? ["runuser", ["-u", user, "--", command, ...args]] : [command, args];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
