import { spawn } from "node:child_process";
import { fetchAgain, freePort, type HttpTarget, httpChainGraph, lineGraph, productProcesses, publish, runCli, startHttpTarget, startTestDeployment, startTestRun, startWeb, type TestDeployment, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Silent failures, seeded: a waiting run whose timer row is gone, an overdue timer whose wake-up was lost, a step
 * whose worker died holding its lease, and a ready step whose wake-up job was dropped. No sweeper runs, so nothing
 * repairs them on its own. `holdfast doctor` and the health figures (/api/health, /metrics) find each;
 * `holdfast doctor --repair` makes each run complete. /metrics changes as the work happens.
 */
let d: TestDeployment;
let target: HttpTarget;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
// /metrics and the detailed /api/health answer only a scraper holding the token.
const metricsToken = "doctor-metrics-token-0123456789";
const scraper = { headers: { authorization: `Bearer ${metricsToken}` } };

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
  await publish(d.t.db, httpChainGraph(target.url, 1), { automation: "call" });
  const nap = { id: "nap", kind: "wait", config: { rule: { kind: "duration", seconds: 1 } } };
  await publish(d.t.db, lineGraph({ id: "t", kind: "trigger", config: { eventIdField: "id" } }, nap, { id: "e", kind: "end" }), { automation: "nap" });
  await d.startWeb({ METRICS_TOKEN: metricsToken });
});

afterAll(async () => d?.stop());

const start = async (automation: string, key: string) => await startTestRun(d.t.db, automation, { id: key });

const doctor = (...args: string[]) => runCli(d.t.url, ["doctor", ...args]);

const metric = (text: string, name: string) => Number(new RegExp(`^${name.replace(/[{}"=]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);

describe("the doctor", () => {
  it("finds each seeded stuck run, the health figures count them, and --repair makes each complete", async () => {
    // Seeded with no process running: every wake-up row is removed before anything could relay it.
    const noTimer = await start("nap", "no-timer");
    await q("DELETE FROM timers WHERE run_id = $1", [noTimer]);
    const overdue = await start("nap", "overdue");
    await q("UPDATE timers SET due_at = now() - interval '1 minute' WHERE run_id = $1", [overdue]);
    const leased = await start("call", "leased");
    await q(
      "UPDATE steps SET status = 'running', owner = 'worker-that-died', attempt = 1, lease_until = now() - interval '1 minute' WHERE run_id = $1",
      [leased],
    );
    const dropped = await start("call", "dropped");
    await q("UPDATE steps SET available_at = now() - interval '1 minute', updated_at = now() - interval '1 minute' WHERE run_id = $1", [dropped]);
    await q("UPDATE runs SET updated_at = now() - interval '1 minute'");
    await q("DELETE FROM outbox");
    const runs = { noTimer, overdue, leased, dropped };

    const found = doctor("--json");
    expect(found.status).toBe(1);
    const findings = JSON.parse(found.stdout).findings as { check: string; count: number; examples: { runId: string }[] }[];
    const of = (check: string) => findings.find((f) => f.check === check);
    expect(of("waiting_without_timer")).toMatchObject({ count: 1, examples: [{ runId: noTimer }] });
    expect(of("overdue_timers")).toMatchObject({ count: 1, examples: [{ runId: overdue }] });
    expect(of("expired_leases")).toMatchObject({ count: 1, examples: [{ runId: leased }] });
    expect(of("lost_wakeups")).toMatchObject({ count: 1, examples: [{ runId: dropped }] });
    expect(of("no_way_forward")?.count).toBe(0);
    expect(doctor().stdout).toMatch(/FIND\s+waiting_without_timer\s+1/);

    const health = (await (await fetchAgain(`${d.web.base}/api/health`, scraper)).json()) as { ok: boolean; figures: { silentFailures: Record<string, number>; timers: { overdue: number } } };
    expect(health.ok).toBe(true);
    expect(health.figures.silentFailures).toMatchObject({ waiting_without_timer: 1, overdue_timers: 1, expired_leases: 1, lost_wakeups: 1, no_way_forward: 0 });
    expect(health.figures.timers.overdue).toBe(1);
    await new Promise((r) => setTimeout(r, 2_100)); // past the figures' 2 s cache
    const before = await (await fetchAgain(`${d.web.base}/metrics`, scraper)).text();
    expect(metric(before, 'holdfast_silent_failures{check="overdue_timers"}')).toBe(1);
    expect(metric(before, 'holdfast_silent_failures{check="no_way_forward"}')).toBe(0);
    expect(metric(before, 'holdfast_runs{status="running"}')).toBe(4);
    expect(metric(before, 'holdfast_runs{status="completed"}')).toBe(0);
    expect(before).toMatch(/^holdfast_lane_oldest_ready_seconds\{lane="io"\} \d/m);
    expect(before).toMatch(/^holdfast_timer_lateness_ms\{quantile="0.99"\} /m);

    // The product comes up without a sweeper: nothing moves the four runs until the doctor repairs them.
    await d.startApps(productProcesses({ io: {} }, { sweeper: false }));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await q("SELECT count(*)::int AS n FROM runs WHERE status = 'running'")).toEqual([{ n: 4 }]);

    const repaired = doctor("--repair", "--json");
    expect(repaired.status).toBe(0);
    expect(JSON.parse(repaired.stdout).repaired).toMatchObject({ waiting_without_timer: 1, expired_leases: 1, lost_wakeups: 1 });
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM runs WHERE status = 'completed'"))[0].n === 4, 30_000, "all four runs to complete");
    for (const runId of Object.values(runs)) expect(await q("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
    expect(await q("SELECT type FROM run_events WHERE run_id = $1 AND type = 'timer.recreated'", [noTimer])).toEqual([{ type: "timer.recreated" }]);
    expect(JSON.parse(doctor("--json").stdout).findings.every((f: { count: number }) => f.count === 0)).toBe(true);

    await new Promise((r) => setTimeout(r, 2_100));
    const after = await (await fetchAgain(`${d.web.base}/metrics`, scraper)).text();
    expect(metric(after, 'holdfast_runs{status="completed"}')).toBe(4);
    expect(metric(after, 'holdfast_runs{status="running"}')).toBe(0);
    expect(metric(after, 'holdfast_silent_failures{check="overdue_timers"}')).toBe(0);
    expect(metric(after, "holdfast_timers_fired_recent")).toBeGreaterThanOrEqual(2);
  });

  it("readiness fails when Redis may evict keys, or does not answer", async () => {
    // A second Redis with an eviction policy BullMQ cannot live with.
    const port = await freePort();
    const evicting = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--maxmemory-policy", "allkeys-lru"], { stdio: "ignore" });
    const other = await startWeb({ ...d.env, METRICS_TOKEN: metricsToken, REDIS_URL: `redis://127.0.0.1:${port}` });
    try {
      const res = await fetchAgain(`${other.base}/api/health`, scraper);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { ready: { redis: unknown } }).ready.redis).toMatchObject({ ok: false, maxmemoryPolicy: "allkeys-lru" });
      evicting.kill("SIGKILL");
      await new Promise((r) => setTimeout(r, 2_200)); // past the figures' 2 s cache
      const gone = await fetchAgain(`${other.base}/api/health`, scraper);
      expect(gone.status).toBe(503);
      expect(((await gone.json()) as { ready: { redis: { problem: string } } }).ready.redis.problem).toMatch(/^redis: /);
      expect((await fetchAgain(`${other.base}/api/health?live=1`)).status).toBe(200);
      expect((await fetchAgain(`${d.web.base}/api/health`)).status).toBe(200);
    } finally {
      evicting.kill("SIGKILL");
      await other.stop();
    }
  });
});
