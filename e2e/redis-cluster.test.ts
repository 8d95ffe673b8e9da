import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HttpTarget, httpChainGraph, productProcesses, publish, startHttpTarget, startTestDeployment, startTestRun, type TestDeployment, waitFor } from "@holdfast/testkit";
import { type RedisClusterHandle, startRedisCluster } from "@holdfast/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A deployment whose queues and wake-ups live on a Redis Cluster (REDIS_CLUSTER_NODES) loses nothing when a master
 * dies: runs with a wait and three calls keep starting while two masters are SIGKILLed (the first restarted between),
 * and every run finishes, every call made once. PostgreSQL is the record; what a failover dropped (a job not yet
 * replicated, a publish to the dead node) the sweeper wakes again.
 */
let d: TestDeployment;
let http: HttpTarget;
let cluster: RedisClusterHandle;
let dir: string;
const runs = 100;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hf-e2e-redis-cluster-"));
  cluster = await startRedisCluster(dir);
  d = await startTestDeployment();
  http = d.closeAtStop(await startHttpTarget());
}, 90_000);
afterAll(async () => {
  await d?.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

describe("Holdfast on a Redis Cluster", () => {
  it("finishes every run exactly once while two masters are killed", async () => {
    await publish(d.t.db, httpChainGraph(http.url, 3, { pauseSeconds: 1 }), { automation: "cluster" });
    const env = d.quickEnv({ REDIS_CLUSTER_NODES: cluster.nodes, LANE: "io" });
    const apps = await d.startApps(
      productProcesses({ io: {} }).map((spec) => (typeof spec === "string" ? { app: spec, env } : { ...spec, env: { ...env, ...spec.env } })),
      60_000,
    );
    // REDIS_URL is still set (testkit's single Redis) and is said to be ignored.
    expect(apps[0]?.output()).toMatch(/Redis Cluster \(seed nodes .*REDIS_URL is ignored/);

    const started: { runId: string; at: number }[] = [];
    const starting = (async () => {
      for (let i = 0; i < runs; i++) {
        started.push({ runId: await startTestRun(d.t.db, "cluster", { id: `c-${i}` }), at: Date.now() });
        await new Promise((r) => setTimeout(r, 80));
      }
    })();
    const kills: { port: number; failoverMs: number; at: number }[] = [];
    await new Promise((r) => setTimeout(r, 1_500));
    const first = await cluster.killMaster();
    kills.push({ ...first, at: Date.now() - first.failoverMs });
    await cluster.restartNode(first.port);
    const second = await cluster.killMaster();
    kills.push({ ...second, at: Date.now() - second.failoverMs });
    await starting;
    console.log(`masters killed: ${kills.map((k) => `${k.port} (failover ${k.failoverMs} ms)`).join(", ")}`);

    const ids = started.map((s) => s.runId);
    await waitFor(
      async () => (await d.q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [ids]))[0]?.n === runs,
      60_000,
      "every run to complete",
    ).catch(async (error) => {
      // Where the runs stand and what the processes said, for whoever reads the failure.
      console.log(await d.q("SELECT status, count(*)::int AS n FROM runs WHERE id = ANY($1) GROUP BY 1", [ids]));
      console.log(await d.q("SELECT node_id, status, count(*)::int AS n FROM steps WHERE run_id = ANY($1) GROUP BY 1, 2 ORDER BY 1, 2", [ids]));
      for (const app of apps) console.log(`--- ${app.name}\n${app.output().slice(-3_000)}`);
      throw error;
    });
    // Exactly once: no node of a run executed twice, and each of the 3 calls of each run reached the target once.
    const twice = await d.q("SELECT run_id, node_id FROM steps WHERE run_id = ANY($1) GROUP BY run_id, node_id, iteration HAVING count(*) > 1", [ids]);
    expect(twice).toEqual([]);
    expect(http.effects()).toBe(runs * 3);

    const rows = await d.q(
      `SELECT r.id, t.lateness_ms, extract(epoch FROM r.finished_at - r.created_at) * 1000 AS ms, t.fired_by
         FROM runs r LEFT JOIN timers t ON t.run_id = r.id WHERE r.id = ANY($1)`,
      [ids],
    );
    const ms = rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const median = pct(ms, 50);
    // Delayed: over a second later than the median run (each run waits 1 s by design).
    const delayed = ms.filter((m) => m > median + 1_000).length;
    const bySweeper = rows.filter((r) => String(r.fired_by ?? "").startsWith("sweeper")).length;
    console.log(
      `${runs} runs: start to finish p50 ${median.toFixed(0)} ms, p95 ${pct(ms, 95).toFixed(0)} ms, max ${pct(ms, 100).toFixed(0)} ms; ` +
        `${delayed} runs over a second later than the median; ${bySweeper} timers fired by the sweeper`,
    );
  }, 150_000);
});
