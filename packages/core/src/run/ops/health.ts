import type { Db } from "@holdfast/db";
import { type RedisTarget, redisPolicy } from "@holdfast/queue";
import { laneNames } from "../../base/catalog";
import { databaseNow, databasePing } from "../../store/sql/database";
import { effectsFigures } from "../../store/sql/effects";
import { leaderLeasesCurrent } from "../../store/sql/leader-leases";
import { outboxBacklog } from "../../store/sql/outbox";
import { runsCountByStatus } from "../../store/sql/runs-view";
import { stepsCountByLane } from "../../store/sql/steps-view";
import { timersFigures } from "../../store/sql/timers";
import { type CheckName, checkNames, runChecks } from "./doctor";

/**
 * The seed's measurements, read from the database (the one record every process writes): how late timers fire,
 * how long the oldest ready step of each lane has waited, effects claimed and not settled, outbox backlog and age,
 * who leads the sweep, runs by status, and every silent-failure check's count (`runs with no way forward` must be 0).
 * /api/health returns them as JSON, /metrics as Prometheus gauges, `holdfast doctor` with examples.
 */
export interface HealthFigures {
  at: string;
  timers: {
    /** Timers fired in the last 5 minutes, and how late (ms past due_at, by the database clock). */
    firedRecently: number;
    latenessP50Ms: number;
    latenessP99Ms: number;
    latenessMaxMs: number;
    /** Unfired timers already past due. */
    overdue: number;
    oldestOverdueSeconds: number;
  };
  /** Per lane: ready steps that are due, and how long the oldest has waited. */
  lanes: Record<string, { ready: number; oldestReadySeconds: number; running: number; parked: number }>;
  effects: { inFlight: number; inFlightPastLease: number; needsReview: number; outcomeUnknown: number };
  outbox: { backlog: number; oldestSeconds: number };
  /** Real runs by status; test runs (simulated, from the editor) are counted apart in testRuns. */
  runs: Record<string, number>;
  testRuns: Record<string, number>;
  sweeper: { leader: string | null; leaseLive: boolean };
  silentFailures: Record<CheckName, number>;
}

export async function healthFigures(db: Db): Promise<HealthFigures> {
  const timers = await timersFigures(db);
  const laneRows = await stepsCountByLane(db);
  const lanes: HealthFigures["lanes"] = Object.fromEntries(laneNames.map((l) => [l, { ready: 0, oldestReadySeconds: 0, running: 0, parked: 0 }]));
  for (const r of laneRows) lanes[r.lane] = { ready: r.ready, oldestReadySeconds: r.oldest, running: r.running, parked: r.parked };
  const effects = await effectsFigures(db);
  const outbox = await outboxBacklog(db);
  const runRows = await runsCountByStatus(db);
  const runs: Record<string, number> = { running: 0, completed: 0, failed: 0, cancelled: 0, converted: 0 };
  const testRuns: Record<string, number> = { running: 0, completed: 0, failed: 0, cancelled: 0, converted: 0 };
  for (const r of runRows) (r.test ? testRuns : runs)[r.status] = r.n;
  const leader = await leaderLeasesCurrent(db, "sweeper");
  const checks = await runChecks(db, 0);
  const silentFailures = Object.fromEntries(checkNames.map((c) => [c, checks.find((f) => f.check === c)?.count ?? 0])) as Record<CheckName, number>;
  const at = await databaseNow(db);
  return {
    at: at.toISOString(),
    timers,
    lanes,
    effects,
    outbox,
    runs,
    testRuns,
    sweeper: { leader: leader?.owner ?? null, leaseLive: leader?.live ?? false },
    silentFailures,
  };
}

export interface Readiness {
  ready: boolean;
  database: boolean;
  redis: { required: boolean; ok: boolean; maxmemoryPolicy: string | null; problem: string | null };
}

/**
 * Ready to take traffic: the database answers, and Redis (unless wake-ups poll the outbox) answers with
 * maxmemory-policy noeviction (any other policy may evict queued wake-ups and delayed timer jobs).
 */
export async function readiness(db: Db, redis: { target: RedisTarget; required: boolean }, timeoutMs = 3_000): Promise<Readiness> {
  const withTimeout = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out")), timeoutMs).unref())]);
  const database = await withTimeout(databasePing(db)).then(
    () => true,
    () => false,
  );
  let r: Readiness["redis"] = { required: redis.required, ok: true, maxmemoryPolicy: null, problem: null };
  if (redis.required) {
    const p = await redisPolicy(redis.target, timeoutMs);
    r = { required: true, ok: p.ok, maxmemoryPolicy: p.policy, problem: p.problem };
  }
  return { ready: database && r.ok, database, redis: r };
}
