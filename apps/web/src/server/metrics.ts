import { type HealthFigures, healthFigures, type Readiness, readiness } from "@holdfast/core/run";
import { redisTargetOf } from "@holdfast/queue";
import type { Db } from "@holdfast/db";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { env } from "../env";
import { withScope } from "./scope";

/**
 * /metrics: the health figures (core/ops/health.ts, read from the database every process writes) as Prometheus
 * gauges, set on each scrape, plus this web process's own default metrics. The figures are cached for 2 s so a
 * burst of scrapes costs one read.
 */
const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "holdfast_web_" });

const g = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });
const m = {
  ready: g("holdfast_ready", "1 when the database answers and Redis (if used) will not evict"),
  timerLateness: g("holdfast_timer_lateness_ms", "How late timers fired in the last 5 minutes (ms past due)", ["quantile"]),
  timersFired: g("holdfast_timers_fired_recent", "Timers fired in the last 5 minutes"),
  timersOverdue: g("holdfast_timers_overdue", "Unfired timers already past due"),
  timerOldestOverdue: g("holdfast_timer_oldest_overdue_seconds", "Age of the most overdue unfired timer"),
  laneReady: g("holdfast_lane_ready_steps", "Due ready steps per lane", ["lane"]),
  laneOldest: g("holdfast_lane_oldest_ready_seconds", "How long the oldest due ready step of the lane has waited", ["lane"]),
  laneRunning: g("holdfast_lane_running_steps", "Steps claimed and running per lane", ["lane"]),
  laneParked: g("holdfast_lane_parked_steps", "Steps parked for a person per lane", ["lane"]),
  effects: g("holdfast_effects", "Effects not settled, by state", ["state"]),
  outboxBacklog: g("holdfast_outbox_backlog", "Due outbox rows not yet relayed"),
  outboxOldest: g("holdfast_outbox_oldest_seconds", "Age of the oldest due outbox row not yet relayed"),
  runs: g("holdfast_runs", "Runs by status (test runs not included)", ["status"]),
  testRuns: g("holdfast_test_runs", "Test runs by status (every effect simulated; not real traffic)", ["status"]),
  sweeperLeader: g("holdfast_sweeper_leader", "1 for the sweeper process holding a live leader lease", ["owner"]),
  silent: g("holdfast_silent_failures", "Findings of each silent-failure check (no_way_forward must be 0)", ["check"]),
};

let cached: { at: number; value: Promise<{ figures: HealthFigures; ready: Readiness }> } | undefined;

export function figuresAndReadiness(db: Db): Promise<{ figures: HealthFigures; ready: Readiness }> {
  if (cached && Date.now() - cached.at < 2_000) return cached.value;
  // The figures count every organisation's rows: an operator's read (its callers hold the metrics token, or answer
  // only ready / not ready), so it runs in the deployment-wide scope of the web's row-level security.
  const figures = withScope({ allOrgs: true }, () => healthFigures(db));
  const value = Promise.all([figures, readiness(db, { target: redisTargetOf(env), required: env.WAKEUPS === "redis" })]).then(
    ([figures, ready]) => ({ figures, ready }),
  );
  cached = { at: Date.now(), value };
  value.catch(() => (cached = undefined));
  return value;
}

export async function metricsText(db: Db): Promise<{ text: string; contentType: string }> {
  const { figures: f, ready } = await figuresAndReadiness(db);
  m.ready.set(ready.ready ? 1 : 0);
  m.timerLateness.set({ quantile: "0.5" }, f.timers.latenessP50Ms);
  m.timerLateness.set({ quantile: "0.99" }, f.timers.latenessP99Ms);
  m.timerLateness.set({ quantile: "1" }, f.timers.latenessMaxMs);
  m.timersFired.set(f.timers.firedRecently);
  m.timersOverdue.set(f.timers.overdue);
  m.timerOldestOverdue.set(f.timers.oldestOverdueSeconds);
  for (const [lane, l] of Object.entries(f.lanes)) {
    m.laneReady.set({ lane }, l.ready);
    m.laneOldest.set({ lane }, l.oldestReadySeconds);
    m.laneRunning.set({ lane }, l.running);
    m.laneParked.set({ lane }, l.parked);
  }
  m.effects.set({ state: "in_flight" }, f.effects.inFlight);
  m.effects.set({ state: "in_flight_past_lease" }, f.effects.inFlightPastLease);
  m.effects.set({ state: "needs_review" }, f.effects.needsReview);
  m.effects.set({ state: "outcome_unknown" }, f.effects.outcomeUnknown);
  m.outboxBacklog.set(f.outbox.backlog);
  m.outboxOldest.set(f.outbox.oldestSeconds);
  for (const [status, n] of Object.entries(f.runs)) m.runs.set({ status }, n);
  for (const [status, n] of Object.entries(f.testRuns)) m.testRuns.set({ status }, n);
  m.sweeperLeader.reset();
  if (f.sweeper.leader && f.sweeper.leaseLive) m.sweeperLeader.set({ owner: f.sweeper.leader }, 1);
  for (const [check, n] of Object.entries(f.silentFailures)) m.silent.set({ check }, n);
  return { text: await registry.metrics(), contentType: registry.contentType };
}
