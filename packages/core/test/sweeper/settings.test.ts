import { describe, expect, it } from "vitest";
import { sweepServiceDefinitions, sweepServicesEnv } from "../../src/run/sweeper/services";

const settingsOf = (env: Record<string, string>) =>
  Object.fromEntries(sweepServicesEnv.parse(env).map((s) => [s.name, (s as unknown as { settings: Record<string, number> }).settings]));

describe("the sweeper services' settings", () => {
  it("every service is in the list once, with a kebab-case name", () => {
    const names = sweepServiceDefinitions.map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it("without any variable, each service has its module's defaults (the values the sweeper always had)", () => {
    const s = settingsOf({});
    for (const [name, settings] of Object.entries(s)) expect(settings.intervalMs, name).toBe(2_000);
    expect(s["due-timers"]).toEqual({ intervalMs: 2_000, orgs: 20, perOrg: 50, batch: 500, maxBatches: 20, parallel: 2, busyIntervalMs: 250 });
    expect(s["lease-rescue"]).toEqual({ intervalMs: 2_000, batch: 500 });
    expect(s["stalled-runs"]).toEqual({ intervalMs: 2_000, batch: 500, staleSeconds: 30 });
    expect(s["outbox-retention"]).toEqual({ intervalMs: 2_000, batch: 5_000, retentionSeconds: 86_400 });
    expect(s["owed-notifications"]).toEqual({ intervalMs: 2_000, batch: 500, leaseSeconds: 30 });
    expect(s["connection-probes"]).toEqual({ intervalMs: 2_000, batch: 5, staleSeconds: 300 });
    expect(s["budget-reaping"]).toEqual({ intervalMs: 2_000, afterSeconds: 600 });
  });

  it("a service's own variable wins over the sweeper-wide one, which wins over the default", () => {
    const s = settingsOf({ SWEEP_INTERVAL_MS: "300", SWEEP_BATCH_SIZE: "100", SWEEP_STALE_SECONDS: "2", SWEEP_LEASE_RESCUE_INTERVAL_MS: "100", SWEEP_STALLED_RUNS_STALE_SECONDS: "9" });
    expect(s["lease-rescue"]).toEqual({ intervalMs: 100, batch: 100 });
    expect(s["stale-wakeups"]).toEqual({ intervalMs: 300, batch: 100, staleSeconds: 2 });
    expect(s["stalled-runs"]).toEqual({ intervalMs: 300, batch: 100, staleSeconds: 9 });
    expect(s["session-purge"]).toEqual({ intervalMs: 300, batch: 1_000 });
    expect(settingsOf({ SWEEP_BUDGET_REAPING_AFTER_SECONDS: "120" })["budget-reaping"]).toEqual({ intervalMs: 2_000, afterSeconds: 120 });
  });

  it("refuses bad values naming each variable once, though every service reads the sweeper-wide ones", () => {
    const parsed = sweepServicesEnv.safeParse({ SWEEP_INTERVAL_MS: "soon", TIMER_SWEEP_ORGS: "0", SWEEP_OUTBOX_RETENTION_BATCH: "-1" });
    expect(parsed.success).toBe(false);
    const problems = parsed.error?.issues.map((i) => i.path.join(".")) ?? [];
    expect(problems.sort()).toEqual(["SWEEP_INTERVAL_MS", "SWEEP_OUTBOX_RETENTION_BATCH", "TIMER_SWEEP_ORGS"]);
  });
});
