import type { Db } from "@holdfast/db";
import { redisPolicy } from "@holdfast/queue";
import { laneNames } from "../catalog";
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
  runs: Record<string, number>;
  sweeper: { leader: string | null; leaseLive: boolean };
  silentFailures: Record<CheckName, number>;
}

export async function healthFigures(db: Db): Promise<HealthFigures> {
  const [timers] = await db.$queryRaw<HealthFigures["timers"][]>`
    SELECT
      (SELECT count(*)::int FROM timers WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled')) AS "firedRecently",
      COALESCE((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY lateness_ms) FROM timers
                WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled')), 0)::float8 AS "latenessP50Ms",
      COALESCE((SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY lateness_ms) FROM timers
                WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled')), 0)::float8 AS "latenessP99Ms",
      COALESCE((SELECT max(lateness_ms) FROM timers
                WHERE fired_at > now() - interval '5 minutes' AND fired_by NOT IN ('signal', 'cancelled')), 0)::float8 AS "latenessMaxMs",
      (SELECT count(*)::int FROM timers WHERE fired_at IS NULL AND due_at < now()) AS overdue,
      COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(due_at)) FROM timers WHERE fired_at IS NULL AND due_at < now()), 0)::float8 AS "oldestOverdueSeconds"`;
  const laneRows = await db.$queryRaw<{ lane: string; ready: number; oldest: number; running: number; parked: number }[]>`
    SELECT lane,
           count(*) FILTER (WHERE status = 'ready' AND available_at <= now())::int AS ready,
           COALESCE(EXTRACT(EPOCH FROM now() - min(available_at) FILTER (WHERE status = 'ready' AND available_at <= now())), 0)::float8 AS oldest,
           count(*) FILTER (WHERE status = 'running')::int AS running,
           count(*) FILTER (WHERE status = 'parked')::int AS parked
    FROM steps WHERE status IN ('ready', 'running', 'parked') GROUP BY lane`;
  const lanes: HealthFigures["lanes"] = Object.fromEntries(laneNames.map((l) => [l, { ready: 0, oldestReadySeconds: 0, running: 0, parked: 0 }]));
  for (const r of laneRows) lanes[r.lane] = { ready: r.ready, oldestReadySeconds: r.oldest, running: r.running, parked: r.parked };
  const [effects] = await db.$queryRaw<HealthFigures["effects"][]>`
    SELECT count(*) FILTER (WHERE status = 'in_flight')::int AS "inFlight",
           count(*) FILTER (WHERE status = 'in_flight' AND lease_until < now())::int AS "inFlightPastLease",
           count(*) FILTER (WHERE status = 'needs_review')::int AS "needsReview",
           count(*) FILTER (WHERE status = 'outcome_unknown')::int AS "outcomeUnknown"
    FROM effects WHERE status <> 'settled'`;
  const [outbox] = await db.$queryRaw<HealthFigures["outbox"][]>`
    SELECT count(*)::int AS backlog, COALESCE(EXTRACT(EPOCH FROM now() - min(available_at)), 0)::float8 AS "oldestSeconds"
    FROM outbox WHERE sent_at IS NULL AND available_at <= now()`;
  const runRows = await db.$queryRaw<{ status: string; n: number }[]>`
    SELECT status, count(*)::int AS n FROM runs GROUP BY status`;
  const runs: Record<string, number> = { running: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const r of runRows) runs[r.status] = r.n;
  const [leader] = await db.$queryRaw<{ owner: string; live: boolean }[]>`
    SELECT owner, lease_until > now() AS live FROM leader_leases WHERE name = 'sweeper'`;
  const checks = await runChecks(db, 0);
  const silentFailures = Object.fromEntries(checkNames.map((c) => [c, checks.find((f) => f.check === c)?.count ?? 0])) as Record<CheckName, number>;
  const [{ at }] = (await db.$queryRaw<{ at: Date }[]>`SELECT now() AS at`) as [{ at: Date }];
  return {
    at: at.toISOString(),
    timers: timers as HealthFigures["timers"],
    lanes,
    effects: effects as HealthFigures["effects"],
    outbox: outbox as HealthFigures["outbox"],
    runs,
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
export async function readiness(db: Db, redis: { url: string; required: boolean }, timeoutMs = 3_000): Promise<Readiness> {
  const withTimeout = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out")), timeoutMs).unref())]);
  const database = await withTimeout(db.$queryRaw`SELECT 1`).then(
    () => true,
    () => false,
  );
  let r: Readiness["redis"] = { required: redis.required, ok: true, maxmemoryPolicy: null, problem: null };
  if (redis.required) {
    const p = await redisPolicy(redis.url, timeoutMs);
    r = { required: true, ok: p.ok, maxmemoryPolicy: p.policy, problem: p.problem };
  }
  return { ready: database && r.ok, database, redis: r };
}
