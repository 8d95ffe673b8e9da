import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { startRun } from "@holdfast/core/run";
import {
  cliEntry,
  type AppProcess,
  appEnv,
  createTestDatabase,
  createTestPrefix,
  type HttpTarget,
  httpChainGraph,
  publish,
  repoRoot,
  spawnApp,
  startHttpTarget,
  startUntilKilled,
  type TestDatabase,
  waitFor,
} from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Real processes killed with SIGKILL at named crash points, restarted like a process manager would, until each
 * point has killed its process HOLDFAST_CRASH_CYCLES times (3 in CI; `pnpm test:crash` runs 50). Afterwards every
 * run must complete, every step must have exactly one settled result, and the timeline must show the extra attempts.
 */
const cycles = Number(process.env.HOLDFAST_CRASH_CYCLES ?? 3);
/** Each kill costs a restart (about 2-3 s here) and the backlog it leaves must drain. */
const testTimeout = 120_000 + cycles * 8_000;
const stepsPerRun = 3;

let t: TestDatabase;
let target: HttpTarget;
const prefixes: { clear(): Promise<void> }[] = [];
const report: Record<string, { kills: number; runs: number; extraAttempts: number; repeatedCalls: number }> = {};

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
});
afterAll(async () => {
  console.log(`crash cycles per point: ${cycles}\n${JSON.stringify(report, null, 2)}`);
  await target?.close();
  await Promise.all(prefixes.map((p) => p.clear()));
  await t?.drop();
});

const envFor = (prefix: string) => appEnv(t.url, prefix);

/** One delivery of the automation's trigger, as a webhook with this webhook-id would make it. */
const startOne = async (automation: string, body: Record<string, unknown>, webhookId: string) =>
  (
    await startRun(t.db, {
      orgSlug: "acme",
      automationSlug: automation,
      rawBody: "{}",
      body,
      headers: { "webhook-id": webhookId, "webhook-timestamp": null, "webhook-signature": null },
      via: "crash-test",
      auth: { kind: "operator" },
    })
  ).runId;

type Point = "relay.after_publish" | "worker.after_take" | "worker.after_claim" | "worker.before_settle" | "engine.after_commit";
const victim: Record<Point, "relay" | "lane-worker" | "engine"> = {
  "relay.after_publish": "relay",
  "worker.after_take": "lane-worker",
  "worker.after_claim": "lane-worker",
  "worker.before_settle": "lane-worker",
  "engine.after_commit": "engine",
};

async function startProcesses(env: Record<string, string>, crash?: { app: string; point: string }) {
  const apps = (["relay", "engine", "lane-worker", "sweeper"] as const).map((app) =>
    spawnApp(app, { env, ...(crash?.app === app ? { crash: { point: crash.point, cycles } } : { restart: true }) }),
  );
  return apps;
}

/** Waits for every run to complete; if they do not, fails naming the unfinished ones with the processes' last output. */
async function allCompleted(runIds: string[], apps: AppProcess[]) {
  await waitFor(
    async () => {
      const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [runIds]);
      return rows[0].n === runIds.length;
    },
    90_000,
    "every run to complete",
  ).catch(async (error) => {
    const { rows } = await t.sql.query("SELECT id, status FROM runs WHERE id = ANY($1) AND status <> 'completed'", [runIds]);
    throw new Error(`${error.message}\nunfinished: ${JSON.stringify(rows)}\n${apps.map((a) => a.output().slice(-1500)).join("\n---\n")}`);
  });
}

async function assertAllSettledOnce(automationId: string, runIds: string[]) {
  const q = async (sql: string, p: unknown[]) => (await t.sql.query(sql, p)).rows;
  const runs = await q("SELECT status FROM runs WHERE id = ANY($1)", [runIds]);
  expect(runs.every((r) => r.status === "completed")).toBe(true);
  const steps = await q(
    `SELECT s.id, s.status, s.attempt,
            (SELECT count(*)::int FROM run_events e WHERE e.step_id = s.id AND e.type = 'step.succeeded') AS settles
     FROM steps s WHERE s.run_id = ANY($1) AND s.kind = 'http_request'`,
    [runIds],
  );
  expect(steps).toHaveLength(runIds.length * stepsPerRun);
  const open = await q("SELECT count(*)::int AS n FROM steps WHERE run_id = ANY($1) AND status <> 'done'", [runIds]);
  expect(open).toEqual([{ n: 0 }]);
  for (const s of steps) {
    expect(s.status).toBe("done");
    expect(s.settles).toBe(1);
  }
  // Every effect key reached the provider, and the provider acted once per key.
  for (const runId of runIds) for (let i = 1; i <= stepsPerRun; i++) expect(target.calls.get(`${runId}/call_${i}/1`)).toBeGreaterThanOrEqual(1);
  expect(automationId).toBeTruthy();
  return steps.filter((s) => s.attempt > 1).length;
}

describe.each(Object.keys(victim) as Point[])("crash point %s", (point) => {
  it(`kills ${victim[point]} ${cycles} times and every run still completes with one settled result per step`, async () => {
    const name = point.replace(/[._]/g, "-");
    // Starts and settles walk the run themselves; the engine walks after a timer fires, so its runs have one.
    const graph = httpChainGraph(target.url, stepsPerRun, point === "engine.after_commit" ? { pauseSeconds: 1 } : {});
    const seeded = await publish(t.db, graph, { automation: name });
    const prefix = createTestPrefix();
    prefixes.push(prefix);
    // The relay publishes a step's wake-up only when no lane worker took it on its NOTIFY: here none does, and the relay
    // hears first steps and publishes them at once (no grace), as a deployment without LISTEN dispatch is set up.
    const env = { ...envFor(prefix.prefix), ...(point === "relay.after_publish" ? { LISTEN_DISPATCH: "off", RELAY_STEP_READY_GRACE_MS: "0" } : {}) };
    const apps: AppProcess[] = await startProcesses(env, { app: victim[point], point });
    const crashing = apps.find((a) => a.name === victim[point]) as AppProcess;
    let runIds: string[] = [];
    try {
      // Feed runs until the crash point has fired `cycles` times: each restart is armed again.
      runIds = await startUntilKilled(crashing, cycles, (n) => startOne(name, { n }, `${name}-${n}`), {
        everyMs: 250,
        timeoutMs: 60_000 + cycles * 4_000,
        what: `${cycles} kills at ${point}`,
      });
      await allCompleted(runIds, apps);
      expect(crashing.kills()).toBe(cycles);
      const extraAttempts = await assertAllSettledOnce(seeded.automationId, runIds);
      const repeatedCalls = [...target.calls.entries()].filter(([k, n]) => runIds.some((r) => k.startsWith(r)) && n > 1).length;
      if (point === "worker.after_claim" || point === "worker.before_settle" || point === "worker.after_take") {
        // worker.after_take: the take claims the steps it takes in the same commit, so they died claimed, as here.
        // The killed worker's attempts show on the timeline as lapsed leases followed by a new attempt.
        expect(extraAttempts).toBeGreaterThanOrEqual(1);
        const { rows } = await t.sql.query(
          "SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'step.lease_expired'",
          [runIds],
        );
        expect(rows[0].n).toBeGreaterThanOrEqual(cycles);
      }
      if (point === "worker.before_settle") expect(repeatedCalls).toBeGreaterThanOrEqual(1); // same key, provider deduplicated
      report[point] = { kills: crashing.kills(), runs: runIds.length, extraAttempts, repeatedCalls };
    } finally {
      await Promise.all(apps.map((a) => a.stop()));
    }
  }, testTimeout);
});

describe("crash point worker.after_settle_take", () => {
  it(`kills the lane worker ${cycles} times right after a settle batch took first steps: every run completes, each step settled once`, async () => {
    const name = "after-settle-take";
    const seeded = await publish(t.db, httpChainGraph(target.url, stepsPerRun), { automation: name });
    const prefix = createTestPrefix();
    prefixes.push(prefix);
    // Two slots and a slow provider against a run started every 50 ms: first steps wait while both slots are busy, so
    // the settles that end a run take them in their batch. The relay leaves them to the worker (a long grace), so no
    // queue job waits for a slot, which would stop those takes.
    const env = { ...envFor(prefix.prefix), LANE_CONCURRENCY: "2", RELAY_STEP_READY_GRACE_MS: "60000" };
    target.behave({ delayMs: 40, failFirst: 0, delayFirstOnly: false });
    const apps = await startProcesses(env, { app: "lane-worker", point: "worker.after_settle_take" });
    const crashing = apps.find((a) => a.name === "lane-worker") as AppProcess;
    let runIds: string[] = [];
    try {
      runIds = await startUntilKilled(crashing, cycles, (n) => startOne(name, { n }, `${name}-${n}`), {
        everyMs: 50,
        timeoutMs: 60_000 + cycles * 4_000,
        what: `${cycles} kills at worker.after_settle_take`,
      });
      target.behave({ delayMs: 0, failFirst: 0, delayFirstOnly: false });
      await allCompleted(runIds, apps);
      expect(crashing.kills()).toBe(cycles);
      const extraAttempts = await assertAllSettledOnce(seeded.automationId, runIds);
      // The taken steps died claimed: their leases lapsed and another attempt ran them.
      expect(extraAttempts).toBeGreaterThanOrEqual(1);
      const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'step.lease_expired'", [runIds]);
      expect(rows[0].n).toBeGreaterThanOrEqual(cycles);
      report["worker.after_settle_take"] = { kills: crashing.kills(), runs: runIds.length, extraAttempts, repeatedCalls: 0 };
    } finally {
      target.behave({ delayMs: 0, failFirst: 0, delayFirstOnly: false });
      await Promise.all(apps.map((a) => a.stop()));
    }
  }, testTimeout);
});

describe("crash point start.after_commit", () => {
  it(`kills the starting process ${cycles} times after its commit; the runs still complete and a retry finds them`, async () => {
    const name = "start-after-commit";
    await publish(t.db, httpChainGraph(target.url, stepsPerRun), { automation: name });
    const prefix = createTestPrefix();
    prefixes.push(prefix);
    const env = envFor(prefix.prefix);
    const cli = (key: string, crash: boolean) =>
      spawnSync(process.execPath, [...cliEntry(repoRoot), "runs", "start", "acme", name, "--key", key, "--input", "{}"], {
        cwd: repoRoot,
        env: { ...process.env, ...env, ...(crash ? { HOLDFAST_CRASH_AT: "start.after_commit" } : {}) },
        encoding: "utf8",
      });
    const runIds: string[] = [];
    for (let i = 0; i < cycles; i++) {
      const killed = cli(`k${i}`, true);
      expect(killed.signal).toBe("SIGKILL");
      // The sender saw no answer and retries: the same run, reported as a duplicate.
      const retry = cli(`k${i}`, false);
      const outcome = JSON.parse(retry.stdout) as { runId: string; duplicate: boolean };
      expect(outcome.duplicate).toBe(true);
      runIds.push(outcome.runId);
    }
    // Nothing was published before the kill; the relay finds the committed outbox rows when it starts.
    const apps = await startProcesses(env);
    try {
      await waitFor(
        async () => {
          const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [runIds]);
          return rows[0].n === runIds.length;
        },
        60_000,
        "every run to complete",
      );
      await assertAllSettledOnce("x", runIds);
      report["start.after_commit"] = { kills: cycles, runs: runIds.length, extraAttempts: 0, repeatedCalls: 0 };
    } finally {
      await Promise.all(apps.map((a) => a.stop()));
    }
  }, testTimeout);
});

describe("crash point worker.before_settle, provider without idempotency", () => {
  it(`kills the worker ${cycles} times after its call returned: each uncertain effect is parked as needs_review and nothing is sent twice`, async () => {
    const name = "no-idempotency";
    const graph = httpChainGraph(target.url, 1);
    const node = graph.nodes.find((x) => x.kind === "http_request");
    if (node?.kind === "http_request") node.config.idempotent = false;
    await publish(t.db, graph, { automation: name });
    const prefix = createTestPrefix();
    prefixes.push(prefix);
    const apps = await startProcesses(envFor(prefix.prefix), { app: "lane-worker", point: "worker.before_settle" });
    const worker = apps.find((a) => a.name === "lane-worker") as AppProcess;
    let runIds: string[] = [];
    try {
      runIds = await startUntilKilled(worker, cycles, (n) => startOne(name, {}, `${name}-${n}`), {
        everyMs: 250,
        timeoutMs: 60_000 + cycles * 4_000,
        what: `${cycles} kills`,
      });
      await waitFor(
        async () => (await t.sql.query("SELECT count(*)::int AS n FROM runs r WHERE id = ANY($1) AND (status <> 'running' OR EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'parked' AND s.error->>'code' = 'needs_review'))", [runIds])).rows[0].n === runIds.length,
        90_000,
        "every run to finish",
      );
      const { rows } = await t.sql.query(
        "SELECT r.status, e.status AS effect FROM runs r JOIN effects e ON e.run_id = r.id WHERE r.id = ANY($1)",
        [runIds],
      );
      const parked = rows.filter((r) => r.effect === "needs_review");
      // Every effect in flight in a killed process is uncertain, not only the one at the crash point.
      expect(parked.length).toBeGreaterThanOrEqual(cycles);
      // Parked for a person (the run page shows "needs review"), not failed: resolving it is run/runs/resolve.ts.
      for (const r of parked) expect(r.status).toBe("running");
      for (const r of rows.filter((x) => x.effect !== "needs_review")) expect(r).toEqual({ status: "completed", effect: "settled" });
      for (const runId of runIds) expect(target.calls.get(`${runId}/call_1/1`) ?? 0).toBeLessThanOrEqual(1);
      report["worker.before_settle (no idempotency)"] = { kills: worker.kills(), runs: runIds.length, extraAttempts: parked.length, repeatedCalls: 0 };
    } finally {
      await Promise.all(apps.map((a) => a.stop()));
    }
  }, testTimeout);
});
