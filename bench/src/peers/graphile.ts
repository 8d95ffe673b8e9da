// graphile-worker: N chains of 10 jobs where each job enqueues the next. Prints one JSON line.
import { makeWorkerUtils, run } from "graphile-worker";

const url = process.env.PEER_DATABASE_URL as string;
const runs = Number(process.env.PEER_RUNS ?? 300);
const steps = Number(process.env.PEER_STEPS ?? 10);
let finished = 0;
let done: () => void;
const allDone = new Promise<void>((resolve) => (done = resolve));

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
      if (i + 1 < steps) await helpers.addJob("step", { chain, i: i + 1 });
      else if (++finished === runs) done();
    },
  },
});
const started = performance.now();
await Promise.all(Array.from({ length: runs }, (_, chain) => utils.addJob("step", { chain, i: 0 })));
await allDone;
const seconds = (performance.now() - started) / 1000;
await runner.stop();
await utils.release();
process.stdout.write(`${JSON.stringify({ runs, completed: finished, steps: finished * steps, seconds })}\n`);
process.exit(0);
