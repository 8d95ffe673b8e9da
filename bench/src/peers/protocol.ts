import { createInterface } from "node:readline";

/**
 * How a peer process and the bench talk: the peer launches, runs its warm-up (PEER_WARMUP runs, not measured), says
 * "ready", runs when told "go", prints its result as one JSON line, and shuts down when told "stop" (the bench reads
 * its CPU in between).
 */
export interface PeerResult {
  runs: number;
  completed: number;
  steps: number;
  seconds: number;
  latencyMs: { p50: number; p99: number };
  /** From the start call's return to the first step's body beginning (process clock). */
  firstDispatchMs: { p50: number; p99: number };
  /** Step bodies executed, and (run, step) pairs executed more than once. */
  executions: number;
  repeated: number;
}

export const peerEnv = {
  url: process.env.PEER_DATABASE_URL as string,
  runs: Number(process.env.PEER_RUNS ?? 100),
  steps: Number(process.env.PEER_STEPS ?? 10),
  inFlight: Number(process.env.PEER_IN_FLIGHT ?? 32),
  /** Runs before "ready", in the same process and database, out of every figure and check: Holdfast's row does the same. */
  warmup: Number(process.env.PEER_WARMUP ?? 0),
  /** The wait after the warm-up, before "ready" (warmup.ts). */
  warmupSettleMs: Number(process.env.PEER_WARMUP_SETTLE_MS ?? 0),
  step: (process.env.PEER_STEP ?? "noop") as "http" | "noop",
  target: process.env.PEER_TARGET_URL ?? "",
};

const lines = createInterface({ input: process.stdin });
const waiting = new Map<string, () => void>();
lines.on("line", (l) => waiting.get(l.trim())?.());
export const told = (word: string) => new Promise<void>((resolve) => waiting.set(word, resolve));

export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** Counts each (run, step) body execution. */
export function executionCounter() {
  const seen = new Map<string, number>();
  return {
    count(key: string) {
      seen.set(key, (seen.get(key) ?? 0) + 1);
    },
    executions: () => [...seen.values()].reduce((a, b) => a + b, 0),
    repeated: () => [...seen.values()].filter((n) => n > 1).length,
  };
}

/** Keeps `inFlight` runs going until `runs` were started: each loop starts one and waits for it to finish. */
export async function closedLoop(
  runs: number,
  inFlight: number,
  runOne: (i: number) => Promise<{ firstStepAt: () => number | undefined; startedAt: number }>,
): Promise<{ seconds: number; latency: number[]; dispatch: number[] }> {
  let next = 0;
  const latency: number[] = [];
  const dispatch: number[] = [];
  const began = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < runs) {
        const i = next++;
        const t0 = performance.now();
        const r = await runOne(i);
        latency.push(performance.now() - t0);
        const first = r.firstStepAt();
        if (first !== undefined) dispatch.push(Math.max(0, first - r.startedAt));
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  latency.sort((a, b) => a - b);
  dispatch.sort((a, b) => a - b);
  return { seconds, latency, dispatch };
}

export function report(r: PeerResult): void {
  process.stdout.write(`${JSON.stringify(r)}\n`);
}

/**
 * The warm-up (PEER_WARMUP runs, `inFlight` at a time, ids apart from the measured ones), then the settle pause every
 * system waits. A warm-up run that did not complete ends the process with the reason: the bench fails the row.
 */
export async function warmUp(runOne: (i: number) => Promise<boolean>): Promise<void> {
  let incomplete = 0;
  await closedLoop(peerEnv.warmup, peerEnv.inFlight, async (i) => {
    if (!(await runOne(i))) incomplete++;
    return { startedAt: 0, firstStepAt: () => undefined };
  });
  if (incomplete > 0) {
    process.stderr.write(`${incomplete} of the warm-up's ${peerEnv.warmup} runs did not complete\n`);
    process.exit(1);
  }
  if (peerEnv.warmup > 0) await new Promise((r) => setTimeout(r, peerEnv.warmupSettleMs));
}
