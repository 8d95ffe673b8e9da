import { describe, expect, it } from "vitest";
import { faultsPerKind, planFaults, restartsFor } from "../bench/src/soak/faults/schedule";
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
});
