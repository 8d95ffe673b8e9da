import { runCommand } from "@holdfast/testkit/cluster";

/** Runs a command to its end; rejects with its output when it fails (testkit's, shared with the cluster's starters). */
export const run = (command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> =>
  runCommand(command, args, options);

/** PostgreSQL refuses to run as root: as root, its commands run as this OS user instead. */
export function asUser(user: string | null, command: string, args: string[]): [string, string[]] {
  return user ? ["runuser", ["-u", user, "--", command, ...args]] : [command, args];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
