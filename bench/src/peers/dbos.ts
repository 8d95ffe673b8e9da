// DBOS Transact: N workflows of 10 checkpointed no-op steps, all started at once. Prints one JSON line.
import { DBOS } from "@dbos-inc/dbos-sdk";

const url = process.env.PEER_DATABASE_URL as string;
const runs = Number(process.env.PEER_RUNS ?? 300);
const steps = Number(process.env.PEER_STEPS ?? 10);

DBOS.setConfig({ name: "holdfast-bench", systemDatabaseUrl: url, systemDatabasePoolSize: 20, logLevel: "error" });
const noop = async () => 1;
const workflow = DBOS.registerWorkflow(
  async () => {
    let total = 0;
    for (let i = 0; i < steps; i++) total += await DBOS.runStep(noop, { name: `s${i}` });
    return total;
  },
  { name: "chain" },
);
await DBOS.launch();
const started = performance.now();
const handles = await Promise.all(Array.from({ length: runs }, () => DBOS.startWorkflow(workflow)()));
const results = await Promise.all(handles.map((h) => h.getResult()));
const seconds = (performance.now() - started) / 1000;
await DBOS.shutdown();
const completed = results.filter((r) => r === steps).length;
process.stdout.write(`${JSON.stringify({ runs, completed, steps: completed * steps, seconds })}\n`);
process.exit(0);
