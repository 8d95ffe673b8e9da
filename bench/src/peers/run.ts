import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Meter } from "../measure/meter";
import type { NoopServer } from "../noop-client";
import { dropDatabase, freshDatabase } from "../pg";
import type { RaceResult } from "../result";
import type { PeerResult } from "./protocol";
import { peerReadyTimeoutMs } from "./warmup";

const here = dirname(fileURLToPath(import.meta.url));
const names = { dbos: "DBOS", graphile: "graphile-worker" } as const;

/** One peer in one scenario: its own fresh database and process, measured by the same meter as Holdfast. */
export async function runPeer(
  peer: "dbos" | "graphile",
  s: { step: "http" | "noop"; runs: number; steps: number; inFlight: number; warmupRuns?: number; warmupSettleMs?: number },
  env: { dbName: string; noop: NoopServer; meter: Meter },
): Promise<RaceResult> {
  const dbName = `${env.dbName}_${peer}`;
  const url = await freshDatabase(dbName, false);
  // --no-deprecation: DBOS's own pg client use prints a warning that is not the bench's.
  const child = spawn(process.execPath, ["--no-deprecation", "--import", "tsx", join(here, `${peer}.ts`)], {
    env: {
      ...process.env,
      PEER_DATABASE_URL: url,
      PEER_RUNS: String(s.runs),
      PEER_STEPS: String(s.steps),
      PEER_IN_FLIGHT: String(s.inFlight),
      PEER_WARMUP: String(s.warmupRuns ?? 0),
      PEER_WARMUP_SETTLE_MS: String(s.warmupSettleMs ?? 0),
      PEER_STEP: s.step,
      PEER_TARGET_URL: env.noop.url,
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  const waiters: (() => void)[] = [];
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const line = async (test: (l: string) => boolean): Promise<string> => {
    for (;;) {
      const found = out.split("\n").find(test);
      if (found) return found;
      const more = new Promise<void>((resolve) => waiters.push(resolve));
      const code = await Promise.race([more.then(() => undefined), exited]);
      if (code !== undefined) throw new Error(`${names[peer]} exited (${code}) before it said what the bench waited for:\n${out.slice(-2000)}`);
    }
  };
  try {
    let readyTimer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      line((l) => l === "ready"),
      new Promise<never>((_, reject) => {
        readyTimer = setTimeout(() => reject(new Error(`${names[peer]} did not say ready (launch and warm-up) within ${peerReadyTimeoutMs / 60_000} minutes:\n${out.slice(-2000)}`)), peerReadyTimeoutMs);
      }),
    ]).finally(() => clearTimeout(readyTimer));
    await env.noop.reset();
    const window = await env.meter.begin(dbName, [
      { name: names[peer], pid: () => child.pid },
      { name: "noop-server", pid: () => env.noop.pid },
    ]);
    child.stdin.write("go\n");
    const r = JSON.parse(await line((l) => l.startsWith("{"))) as PeerResult;
    await window.done();
    child.stdin.write("stop\n");
    await exited;
    const measured = await window.end();
    const effects = s.step === "http" ? await env.noop.stats() : null;
    const expected = s.runs * s.steps;
    return {
      system: names[peer],
      scenario: s.step,
      label: `${names[peer]} ${s.step} x${s.steps}`,
      runs: s.runs,
      steps: r.steps,
      seconds: r.seconds,
      runsPerSec: r.completed / r.seconds,
      stepsPerSec: r.steps / r.seconds,
      inFlight: s.inFlight,
      latencyMs: r.latencyMs,
      firstDispatchMs: r.firstDispatchMs,
      chainedDispatchMs: null,
      dispatchClock: "process",
      measured,
      systemNode: [names[peer]],
      lost: r.runs - r.completed + Math.max(0, expected - r.executions) + (effects ? Math.max(0, expected - effects.keys) : 0),
      duplicated: r.repeated + (effects ? effects.repeated : 0),
    };
  } finally {
    child.kill();
    await dropDatabase(dbName);
  }
}
