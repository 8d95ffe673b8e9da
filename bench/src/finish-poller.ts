// The closed loop's completion poll, in its own process (finish-client.ts): the driver names each run it started
// ({ watch: id }), this process asks the database every 5 ms which of them finished and answers { done: ids }. A peer
// learns of a finished workflow in its own process, for nothing; the harness's polls are not the engine's work, so
// they run here, where the meter counts their CPU apart ("outside"), as the no-op server's, not in the driver's.
import pg from "pg";

const url = process.env.BENCH_POLL_URL;
if (!url || !process.send) throw new Error("finish-poller: run by finish-client.ts (BENCH_POLL_URL and an IPC channel)");
const send = process.send.bind(process);

const client = new pg.Client({ connectionString: url, application_name: "holdfast-bench-poll" });
client.on("error", (error) => {
  console.error(`finish-poller: ${error.message}`);
  process.exit(1); // the driver's row fails on the exit
});
await client.connect();
const watching = new Set<string>();
let polls = 0;
let stopping = false;

process.on("disconnect", () => process.exit(0)); // the driver went
process.on("message", (m: { watch?: string; stop?: true }) => {
  if (m.watch) watching.add(m.watch);
  if (m.stop) stopping = true;
});
send({ ready: true }); // connected: the driver starts the row's window after this

while (!stopping) {
  if (watching.size) {
    polls++;
    // A prepared statement, planned once: the harness takes as little of the machine as it can.
    const { rows } = await client.query<{ id: string }>({
      name: "bench_finished",
      text: "SELECT id FROM runs WHERE id = ANY($1) AND status <> 'running'",
      values: [[...watching]],
    });
    if (rows.length) {
      for (const r of rows) watching.delete(r.id);
      send({ done: rows.map((r) => r.id) });
    }
  }
  await new Promise((r) => setTimeout(r, 5));
}
await client.end();
send({ polls }, () => process.exit(0));
