// DBOS Transact: each run is a workflow of N checkpointed steps (DBOS.runStep), `inFlight` workflows at a time.
// A step is the same HTTP call as Holdfast's http_request (PEER_STEP=http) or nothing (noop). See protocol.ts.
import { DBOS } from "@dbos-inc/dbos-sdk";
import { httpCall } from "./http-call";
import { closedLoop, executionCounter, peerEnv, quantile, report, told, warmUp } from "./protocol";

const { url, runs, steps, inFlight, step, target } = peerEnv;
DBOS.setConfig({ name: "holdfast-bench", systemDatabaseUrl: url, systemDatabasePoolSize: 20, logLevel: "error" });

const counter = executionCounter();
const firstStep = new Map<string, number>();
const workflow = DBOS.registerWorkflow(
  async () => {
    const id = DBOS.workflowID as string;
    const measured = !id.startsWith("warm-");
    let done = 0;
    for (let i = 0; i < steps; i++) {
      await DBOS.runStep(
        async () => {
          if (i === 0 && measured) firstStep.set(id, performance.now());
          if (measured) counter.count(`${id}:${i}`);
          if (step === "http") await httpCall(target, `${id}:${i}`);
          return 1;
        },
        { name: `s${i}` },
      );
      done++;
    }
    return done;
  },
  { name: "chain" },
);
await DBOS.launch();

let completed = 0;
const runOne = async (id: string) => {
  const handle = await DBOS.startWorkflow(workflow, { workflowID: id })();
  const startedAt = performance.now();
  const done = (await handle.getResult()) === steps;
  return { done, startedAt, firstStepAt: () => firstStep.get(id) };
};
await warmUp(async (i) => (await runOne(`warm-${i}`)).done);
process.stdout.write("ready\n");
await told("go");

const loop = await closedLoop(runs, inFlight, async (i) => {
  const r = await runOne(`bench-${i}`);
  if (r.done) completed++;
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
await DBOS.shutdown();
process.exit(0);
