import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A free TCP port on 127.0.0.1 (the OS picks it; closed again before the caller binds it). */
export const freeLocalPort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Runs a command to its end; rejects with its output when it fails. */
export function runCommand(command: string, args: string[], options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    // cwd "/": a command run as another user (postgres) cannot enter the test's folder when it is private (a CI clone
    // under a 0700 mktemp folder), and PostgreSQL's tools then stop at "could not change directory".
    const child = spawn(command, args, { cwd: "/", uid: options.uid, gid: options.gid, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
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

export interface OsUser {
  uid: number;
  gid: number;
}

/** The uid/gid of an OS user (PostgreSQL refuses to run as root, so its servers run as `postgres`). */
export async function osUser(name: string): Promise<OsUser> {
  return { uid: Number((await runCommand("id", ["-u", name])).trim()), gid: Number((await runCommand("id", ["-g", name])).trim()) };
}

/** A long-running server process: its own process group (so a kill takes its children too), output to a log file. */
export interface Daemon {
  name: string;
  child: ChildProcess;
  /** Whether it is still running. */
  alive(): boolean;
  /** SIGKILL its whole process group. */
  kill(): void;
}

/**
 * Every daemon still running, killed when the test process exits however it exits (a worker that crashed or timed
 * out never reaches its afterAll): a detached server outlives its parent otherwise, and piles up on a CI machine.
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) if (child.pid) killGroup(child.pid);
});

export function startDaemon(name: string, command: string, args: string[], options: { log: string; user?: OsUser; env?: NodeJS.ProcessEnv }): Daemon {
  const out = createWriteStream(options.log, { flags: "a" });
  const child = spawn(command, args, {
    cwd: "/", // as runCommand's: the test's folder may be closed to the daemon's user
    uid: options.user?.uid,
    gid: options.user?.gid,
    env: options.env ?? process.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Both streams into one file, which ends once the child and both its streams are closed ('close'): piped with their
  // default end, the first stream to end (stdout, when the server is killed) ended the file while the other still had
  // output to write, and the write after the end was an 'error' event nobody heard, which ended the test process.
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  child.once("close", () => out.end());
  // A log that cannot be written (the folder removed under it) loses lines, never the test process.
  out.on("error", () => undefined);
  child.on("error", (e) => {
    if (!out.writableEnded) out.write(`[${name}] failed to start: ${e.message}\n`);
  });
  // The test process must be free to exit while this runs; stop() ends it.
  child.unref();
  const alive = () => child.exitCode === null && child.signalCode === null;
  running.add(child);
  child.on("exit", () => running.delete(child));
  return {
    name,
    child,
    alive,
    kill() {
      if (child.pid && alive()) killGroup(child.pid);
    },
  };
}

/** SIGKILL a process group (or the process alone when it leads none); gone already is fine. */
export function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // ESRCH: already gone
    }
  }
}

/** The postmaster's pid from its data directory (first line of postmaster.pid), or undefined when not running. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value; the error names `what` and the last failure. */
export async function pollUntil<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined | null | false>, everyMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await check();
      if (v) return v;
    } catch (error) {
      last = error;
    }
    await pause(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last instanceof Error ? last.message : String(last)})` : ""}`);
}
