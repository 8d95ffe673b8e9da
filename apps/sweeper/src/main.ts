import { createLogger } from "@holdfast/core/base";
import { databasePing } from "@holdfast/core/store";
import { GraphCache } from "@holdfast/core/versions";
import { systemMailFrom } from "@holdfast/core/providers";
import { onShutdown, requireSecretKey, runSweeper, watchOutages, workerId } from "@holdfast/core/run";
import { createDb } from "@holdfast/db";
import { env, services } from "./env";

const log = createLogger("sweeper", env.LOG_LEVEL);
const id = workerId("sweeper");
// Lost connections are said once per outage by the watch; the pool reconnects by itself and the sweep goes on.
const outages = watchOutages({ log, database: () => databasePing(db) });
const db = createDb(env.DATABASE_URL, { poolSize: Math.min(env.DB_POOL_SIZE, 4), applicationName: "holdfast-sweeper", poolMode: env.DATABASE_POOL_MODE, onConnectionError: (e) => outages.report(e) });
await requireSecretKey(db, log);
const stop = new AbortController();
const ctx = { db, actor: "sweeper", graphs: new GraphCache(), systemMail: systemMailFrom(env) };

// Each service at its own interval, only while this process holds the leader lease (released on shutdown).
const running = runSweeper({ ctx, services, owner: id, leaseMs: env.LEADER_LEASE_MS, log, signal: stop.signal, outages });
log.info({ worker: id, services: Object.fromEntries(services.map((s) => [s.name, s.intervalMs])) }, "sweeper ready");

onShutdown(log, async () => {
  stop.abort();
  await running;
  outages.stop();
  await db.$disconnect();
});
