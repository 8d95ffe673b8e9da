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
  let ready: (() => void) | undefined;
  let stopped: ((polls: number) => void) | undefined;
  let exited = false;
  const failed = new Promise<never>((_, reject) => {
    child.on("exit", (code) => {
      exited = true;
      reject(new Error(`the completion poller exited (${code})`));
    });
  });
  failed.catch(() => {}); // observed by the caller's race, by start and by stop
  // A message sent after the poller exited fails as an event, not a throw: the exit above already failed the row.
  child.on("error", () => {});
  child.on("message", (m: { ready?: true; done?: string[]; polls?: number }) => {
    if (m.ready) ready?.();
    for (const id of m.done ?? []) {
      waiting.get(id)?.();
      waiting.delete(id);
    }
    if (m.polls !== undefined) stopped?.(m.polls);
  });
  // Connected before the row's window opens: its start-up is not the row's.
  await Promise.race([new Promise<void>((resolve) => (ready = resolve)), failed]);
  return {
    pid: child.pid,
    failed,
    finished: (runId) =>
      new Promise<void>((resolve) => {
        waiting.set(runId, resolve);
        if (!exited) child.send({ watch: runId });
      }),
    kill: () => {
      if (!exited) child.kill();
    },
    // Its polls, once it has answered; an exit before that fails the row.
    stop: () =>
      Promise.race([
        new Promise<number>((resolve) => {
          stopped = resolve;
          if (!exited) child.send({ stop: true });
        }),
        failed,
      ]),
  };
}
