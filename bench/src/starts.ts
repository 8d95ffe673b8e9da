import { publishBenchAutomation } from "./publish";
import { startRun } from "@holdfast/core/run";
import { createDb } from "@holdfast/db";
import { createWakePublisher } from "@holdfast/queue";
import pg from "pg";
import { chainGraph } from "./holdfast";
import type { Meter } from "./measure/meter";
import { freshDatabase } from "./pg";

export interface StartsRow {
  /** notify: the trigger's NOTIFY, the target read with each start; bus: announced on Redis, read with each start; kept: on Redis, the target kept (run/start/target-cache.ts). */
  how: "notify" | "bus" | "kept";
  round: number;
  starts: number;
  seconds: number;
  startsPerSec: number;
  /** Transactions of the database (xact_commit) per start: the start's read and its statement, and the listeners'. */
  commitsPerStart: number;
  /** CPU ms per start: the starting process (Node), and the database's backends (the starts' and the listeners'). */
  nodeMs: number;
  pgMs: number;
  load: number;
  /** Runs missing, or without their first step's step.ready row in the outbox. */
  lost: number;
}

/**
 * Starts alone, as a burst of webhook deliveries is: `starts` runs of the race's http automation started through
 * startRun by `concurrency` callers at once, no worker running (only a lane worker's and the relay's LISTENing
 * connections, idle), three ways, each the one before a change and the one after:
 * - notify: first steps told by the outbox trigger's NOTIFY (every notifying commit takes PostgreSQL's one
 *   notification-queue lock through its flush), the trigger URL's start target read with every start;
 * - bus: announced on Redis after the commit (queue/wake.ts), the target read with every start;
 * - kept: announced on Redis, the target kept and checked by the start's one statement (run/start/target-cache.ts).
 * Each round starts with another on fresh databases, so the machine's drift falls on all three.
 */
export async function measureStarts(o: {
  meter: Meter;
  dbName: string;
  redisUrl: string;
  redisPrefix: string;
  starts: number;
  concurrency: number;
  rounds: number;
}): Promise<StartsRow[]> {
  const rows: StartsRow[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    const hows: StartsRow["how"][] = ["notify", "bus", "kept"];
    const shift = (round - 1) % hows.length; // each round starts with another, so none always runs first
    const order = [...hows.slice(shift), ...hows.slice(0, shift)];
    for (const how of order) rows.push(await startsRow(o, how, round));
  }
  return rows;
}

async function startsRow(o: Parameters<typeof measureStarts>[0], how: StartsRow["how"], round: number): Promise<StartsRow> {
  const url = await freshDatabase(o.dbName);
  const warm = createDb(url, { poolSize: o.concurrency, applicationName: "holdfast-start" });
  const db = createDb(url, { poolSize: o.concurrency, applicationName: "holdfast-start" });
  const wake = how !== "notify" ? createWakePublisher({ redis: o.redisUrl, prefix: o.redisPrefix }) : undefined;
  const stats = new pg.Client({ connectionString: url, application_name: "holdfast-bench-starts" });
  // The listeners a deployment has: a lane worker's on its lane's channel, the relay's on the outbox's. Each NOTIFY
  // signals every listening backend of the database, whatever its channel, and each reads the queue in a transaction.
  const listeners = ["holdfast_ready_io", "holdfast_outbox"].map((channel) => ({ channel, client: new pg.Client({ connectionString: url, application_name: `holdfast-bench-listen` }) }));
  try {
    await stats.connect();
    for (const l of listeners) {
      await l.client.connect();
      await l.client.query(`LISTEN ${l.channel}`);
    }
    if (wake && !(await wake.whenConnected(10_000))) throw new Error("Redis did not answer");
    await publishBenchAutomation(warm, { orgSlug: "bench", orgName: "Bench", automationSlug: "starts", automationName: "starts", graph: chainGraph("http", 10, "http://127.0.0.1:9/") });
    const start = (i: number, on = db) =>
      startRun(
        on,
        {
          orgSlug: "bench",
          automationSlug: "starts",
          rawBody: "{}",
          body: { id: `${how}-${i}` },
          headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
          via: "bench",
          auth: { kind: "operator" },
        },
        { ...(wake ? { wake } : {}), keepTarget: how === "kept" },
      );
    // Warm on a pool of its own (the code's first run, the graph's parse), closed before counting: a backend reports
    // its transactions to the statistics when it ends at the latest.
    await Promise.all(Array.from({ length: o.concurrency }, (_, i) => start(-1 - i, warm)));
    await warm.$disconnect();
    // The client's $disconnect ends its pool only once Prisma itself has connected (its adapter owns the pool then);
    // a start's statements go to the pool directly (sqlOf), so connect Prisma before, or the pool outlives the row.
    await db.$connect();
    const window = await o.meter.begin(o.dbName, [{ name: "driver", pid: () => process.pid }], { wal: false, analyze: false });
    let next = 0;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (next < o.starts) await start(next++);
      }),
    );
    const seconds = (performance.now() - began) / 1000;
    await window.done();
    // Closed before counting: a backend's transactions reach the statistics by the time it ends (a listener's reads
    // of the notification queue only then: it runs no command of its own).
    await Promise.all([db.$disconnect(), ...listeners.map((l) => l.client.end())]);
    const figures = await window.end();
    const pgMs = Object.values(figures.pgCpu).reduce((a, b) => a + b, 0) * 1000;
    const [check] = (
      await stats.query<{ runs: number; ready: number }>(
        `SELECT (SELECT count(*)::int FROM runs WHERE input->>'id' NOT LIKE '%--%') AS runs,
                (SELECT count(DISTINCT o.run_id)::int FROM outbox o JOIN runs r ON r.id = o.run_id
                  WHERE o.topic = 'step.ready' AND r.input->>'id' NOT LIKE '%--%') AS ready`,
      )
    ).rows;
    const lost = o.starts - Math.min(check?.runs ?? 0, check?.ready ?? 0);
    return {
      how,
      round,
      starts: o.starts,
      seconds,
      startsPerSec: o.starts / seconds,
      commitsPerStart: figures.commits / o.starts,
      nodeMs: ((figures.nodeCpu.driver ?? 0) * 1000) / o.starts,
      pgMs: pgMs / o.starts,
      load: figures.load.start,
      lost,
    };
  } finally {
    await stats.end().catch(() => {});
    await Promise.all(listeners.map((l) => l.client.end().catch(() => {})));
    await wake?.close();
    await Promise.all([warm.$disconnect().catch(() => {}), db.$disconnect().catch(() => {})]);
  }
}
