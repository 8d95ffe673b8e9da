// graphile-worker: each run is a chain of N jobs where each job enqueues the next, `inFlight` chains at a time,
// concurrency 32. A job is the same HTTP call as Holdfast's http_request (PEER_STEP=http) or nothing (noop).
import { makeWorkerUtils, run } from "graphile-worker";
import { httpCall } from "./http-call";
import { closedLoop, executionCounter, peerEnv, quantile, report, told, warmUp } from "./protocol";

const { url, runs, steps, inFlight, step, target } = peerEnv;
const counter = executionCounter();
const firstStep = new Map<number, number>();
const finished = new Map<number, () => void>();

const utils = await makeWorkerUtils({ connectionString: url });
await utils.migrate();
const runner = await run({
  connectionString: url,
  concurrency: 32,
  maxPoolSize: 40,
  noHandleSignals: true,
  pollInterval: 1000,
  logger: undefined,
  taskList: {
    step: async (payload, helpers) => {
      const { chain, i } = payload as { chain: number; i: number };
      // The warm-up's chains are numbered below 0: out of the figures and checks.
      if (i === 0 && chain >= 0) firstStep.set(chain, performance.now());
      if (chain >= 0) counter.count(`${chain}:${i}`);
      if (step === "http") await httpCall(target, `chain-${chain}:${i}`);
      if (i + 1 < steps) await helpers.addJob("step", { chain, i: i + 1 });
      else finished.get(chain)?.();
    },
  },
});
const runOne = async (chain: number) => {
  const done = new Promise<void>((resolve) => finished.set(chain, resolve));
  await utils.addJob("step", { chain, i: 0 });
  const startedAt = performance.now();
  await done;
  return { startedAt, firstStepAt: () => firstStep.get(chain) };
};
// A chain's end is its last job's body: a job that failed is retried, so an incomplete chain stalls (the bench's wait
// for "ready" fails the row) rather than ending.
await warmUp(async (i) => {
  await runOne(-1 - i);
  return true;
});
process.stdout.write("ready\n");
await told("go");

let completed = 0;
const loop = await closedLoop(runs, inFlight, async (chain) => {
  const r = await runOne(chain);
  completed++;
  return r;
});
report({
  runs,
  completed,
  steps: completed * steps,
  seconds: loop.seconds,
  latencyMs: { p50: quantile(loop.latency, 0.5), p99: quantile(loop.latency, 0.99) },
  firstDispatchMs: { p50: quantile(loop.dispatch, 0.5), p99: quantile(loop.dispatch, 0.99) },
  executions: counter.executions(),
  repeated: counter.repeated(),
});
await told("stop");
await runner.stop();
await utils.release();
process.exit(0);
