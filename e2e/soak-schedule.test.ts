import { describe, expect, it } from "vitest";
import { failoverFigures, seenBySenders } from "../bench/src/soak/failovers";
import type { Injected } from "../bench/src/soak/faults/inject";
import { clusterOutages, faultsPerKind, planFaults, restartsFor } from "../bench/src/soak/faults/schedule";
import type { Delivery } from "../bench/src/soak/load";
import { planFor } from "../bench/src/soak/mix";

/** The soak's fault schedule and load mix are pure functions of the seed: a failing soak replays with --seed. */
describe("soak schedule", () => {
  const options = (seed: number) => ({ seed, loadMs: 3_333_000, perKind: faultsPerKind(10_000), pgRestarts: 3, redisRestarts: 3, stopMs: [1_000, 15_000] as [number, number], downMs: [500, 4_000] as [number, number] });

  it("gives the same faults for the same seed and other faults for another", () => {
    expect(planFaults(options(7))).toEqual(planFaults(options(7)));
    expect(planFaults(options(8))).not.toEqual(planFaults(options(7)));
    expect(planFor(7, 123)).toEqual(planFor(7, 123));
  });

  it("kills and freezes every process kind 20 times at 10,000 runs, restarts each service 3 times, all inside the load", () => {
    const faults = planFaults(options(42));
    const count = (kind: string, target?: string) => faults.filter((f) => f.kind === kind && (!target || f.target === target)).length;
    for (const target of ["web", "relay", "engine", "sweeper", "lane-worker", "mail-in"]) {
      expect({ target, kills: count("sigkill", target), freezes: count("sigstop", target) }).toEqual({ target, kills: 20, freezes: 20 });
    }
    expect([count("pg_restart"), count("redis_restart")]).toEqual([3, 3]);
    for (const f of faults) expect(f.atMs >= 0.05 * 3_333_000 && f.atMs <= 0.9 * 3_333_000).toBe(true);
    for (const f of faults.filter((x) => x.kind === "sigstop")) expect(f.durationMs >= 1_000 && f.durationMs <= 15_000).toBe(true);
    // One outage at a time: each ends well before the next begins.
    const outages = faults.filter((f) => f.kind === "pg_restart" || f.kind === "redis_restart");
    for (let i = 1; i < outages.length; i++) expect((outages[i]?.atMs ?? 0) - (outages[i - 1]?.atMs ?? 0)).toBeGreaterThan(60_000);
  });

  it("scales down in proportion, never below one of each", () => {
    expect([faultsPerKind(10_000), faultsPerKind(2_000), faultsPerKind(200), faultsPerKind(1)]).toEqual([20, 4, 1, 1]);
    expect([restartsFor(10_000), restartsFor(1_000), restartsFor(200)]).toEqual([3, 2, 1]);
  });

  it("the cluster soak swaps the restarts for two leader kills, two master kills and a 10 s cut, one per slot, seeded", () => {
    const cluster = (seed: number) => planFaults({ ...options(seed), pgRestarts: 0, redisRestarts: 0, ...clusterOutages });
    expect(cluster(7)).toEqual(cluster(7));
    const faults = cluster(42);
    const outages = faults.filter((f) => ["pg_failover", "redis_failover", "db_cut", "pg_restart", "redis_restart"].includes(f.kind));
    expect(outages.map((f) => f.kind).sort()).toEqual(["db_cut", "pg_failover", "pg_failover", "redis_failover", "redis_failover"]);
    expect(outages.find((f) => f.kind === "db_cut")).toMatchObject({ target: "lane-worker", durationMs: 10_000 });
    for (let i = 1; i < outages.length; i++) expect((outages[i]?.atMs ?? 0) - (outages[i - 1]?.atMs ?? 0)).toBeGreaterThan(60_000);
    // The single-node soak's schedule for a seed does not change with the cluster's kinds added.
    expect(planFaults({ ...options(7), pgFailovers: 0, redisFailovers: 0, dbCuts: 0 })).toEqual(planFaults(options(7)));
  });
});

describe("failover figures", () => {
  const delivery = (answers: [number, number, boolean?][]): Delivery => ({
    i: 0,
    webhookId: "w",
    attempts: answers.length,
    runIds: [],
    statuses: answers.map((a) => a[0]),
    answeredAt: answers.map((a) => a[1]),
    retryAfter: answers.map((a) => a[2] ?? false),
    refused: [],
    firstAt: 0,
    ackedAt: null,
  });

  it("measures from the first failed delivery after the fault to the first accepted one after it, counting 503s meanwhile", () => {
    const deliveries = [delivery([[202, 900], [503, 1_200, true], [503, 1_500, false], [202, 4_000]]), delivery([[-1, 1_100], [202, 3_500]])];
    const answers = deliveries.flatMap((d) => d.statuses.map((status, k) => ({ at: d.answeredAt[k] as number, status, retryAfter: d.retryAfter[k] as boolean }))).sort((a, b) => a.at - b.at);
    expect(seenBySenders(answers, 1_000, 17_000)).toEqual({ unavailableMs: 2_400, answered503: 2, with503RetryAfter: 1 });
    // Nothing failed after the fault began: 0.
    expect(seenBySenders(answers, 5_000, 21_000)).toEqual({ unavailableMs: 0, answered503: 0, with503RetryAfter: 0 });
  });

  it("sums each kind's failovers with the cluster's own measure beside the senders'", () => {
    const injected: Injected[] = [
      { kind: "pg_failover", target: "pg1", targetKind: "postgres", atMs: 1_000, endMs: 9_000, durationMs: 3_000, failover: { service: "postgres", node: "pg1", failoverMs: 3_000, writableAtMs: 4_000 } },
      { kind: "sigkill", target: "web-1", targetKind: "web", atMs: 2_000, endMs: 2_000, durationMs: 0 },
      { kind: "db_cut", target: "lane-io-1", targetKind: "lane-worker", atMs: 60_000, endMs: 70_000, durationMs: 10_000 },
    ];
    const f = failoverFigures(injected, [delivery([[503, 1_500, true], [202, 5_000], [202, 61_000]])]);
    expect(f.postgres).toEqual({ n: 1, unavailableMs: { n: 1, p50: 3_500, max: 3_500 }, answered503: 1, with503RetryAfter: 1, clusterMs: { n: 1, p50: 3_000, max: 3_000 } });
    expect(f.redis.n).toBe(0);
    expect(f.cuts).toEqual({ n: 1, unavailableMs: { n: 1, p50: 0, max: 0 }, answered503: 0 });
  });
});
