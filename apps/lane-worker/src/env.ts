import { lanes, loadEnv, requireDatabaseSettings } from "@holdfast/core/base";
import { laneWorkerEnv } from "./env-schema";

const raw = loadEnv(laneWorkerEnv);

const base = lanes[raw.LANE];
const leaseMs = raw.LANE_LEASE_MS ?? base.leaseMs;
export const lane = {
  ...base,
  concurrency: raw.LANE_CONCURRENCY ?? base.concurrency,
  leaseMs,
  heartbeatMs: raw.LANE_HEARTBEAT_MS ?? (raw.LANE_LEASE_MS ? Math.round(leaseMs / 3) : base.heartbeatMs),
};
if (lane.heartbeatMs >= lane.leaseMs) {
  process.stderr.write(`invalid environment:\n  LANE_HEARTBEAT_MS must be shorter than the lease (${lane.leaseMs} ms)\n`);
  process.exit(78);
}
// Its LISTEN (first steps straight from the outbox) needs a session: through a transaction pooler, DATABASE_DIRECT_URL.
requireDatabaseSettings(raw, `${lane.name} lane worker`, raw.WAKEUPS === "redis" && raw.LISTEN_DISPATCH === "on");
export const env = raw;
