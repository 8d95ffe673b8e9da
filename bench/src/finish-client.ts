import { fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The closed loop's completion poll in its own process (finish-poller.ts). */
export interface FinishPoller {
  pid: number | undefined;
  /** Resolves when the run has finished (any status but running). */
  finished(runId: string): Promise<void>;
  /** Stops the poller; answers how many polls it made (each a transaction in the measured database). */
  stop(): Promise<number>;
  /** Rejects if the poller exits before stop(). */
  failed: Promise<never>;
  /** Ends the poller at once (a failed row). */
  kill(): void;
}

export async function startFinishPoller(url: string): Promise<FinishPoller> {
  const child = fork(join(here, "finish-poller.ts"), [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, BENCH_POLL_URL: url },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting = new Map<string, () => void>();
  let stopped: ((polls: number) => void) | undefined;
  const failed = new Promise<never>((_, reject) => {
    child.on("exit", (code) => {
      if (!stopped) reject(new Error(`the completion poller exited (${code})`));
    });
  });
  failed.catch(() => {}); // observed by the caller's race
  child.on("message", (m: { done?: string[]; polls?: number }) => {
    for (const id of m.done ?? []) {
      waiting.get(id)?.();
      waiting.delete(id);
    }
    if (m.polls !== undefined) stopped?.(m.polls);
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  return {
    pid: child.pid,
    failed,
    finished: (runId) =>
      new Promise<void>((resolve) => {
        waiting.set(runId, resolve);
        child.send({ watch: runId });
      }),
    kill: () => {
      stopped ??= () => {};
      child.kill();
    },
    stop: () =>
      new Promise<number>((resolve) => {
        stopped = resolve;
        child.send({ stop: true });
      }),
  };
}
