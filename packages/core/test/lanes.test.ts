import { type CrmTarget, createTestDatabase, publish, startCrmTarget, startHttpTarget, type HttpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes, resolveLanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { createLogger } from "../src/base/log";
import { breakersWakeProbes } from "../src/store/sql/connection-limits";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let crm: CrmTarget;
let http: HttpTarget;
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const crmGraph = (connection: string) =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "sync", kind: "crm_upsert", config: { connection, object: "leads", matchKey: "lead-{{input.n}}", fields: { n: "{{input.n}}" } } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "sync" },
      { from: "sync", to: "e" },
    ],
  });

beforeAll(async () => {
  t = await createTestDatabase();
  crm = await startCrmTarget(["capped", "free", "flaky"]);
  http = await startHttpTarget();
  const { orgId } = await publish(t.db, crmGraph("capped"), { automation: "capped" });
  await publish(t.db, crmGraph("free"), { automation: "free" });
  await publish(t.db, crmGraph("flaky"), { automation: "flaky" });
  await createConnection(t.db, { orgId, kind: "crm", name: "capped", config: { baseUrl: crm.baseUrl }, secret: "capped", limits: { maxConcurrent: 3 } });
  await createConnection(t.db, { orgId, kind: "crm", name: "free", config: { baseUrl: crm.baseUrl }, secret: "free" });
  await createConnection(t.db, {
    orgId,
    kind: "crm",
    name: "flaky",
    config: { baseUrl: crm.baseUrl },
    secret: "flaky",
    limits: { breaker: { failureRate: 0.5, minCalls: 5, windowMs: 60_000, coolDownMs: 800 } },
  });
  await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "call", kind: "http_request", config: { url: http.url } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "call" },
        { from: "call", to: "e" },
      ],
    }),
    { automation: "http" },
  );
});
afterAll(async () => {
  await crm?.close();
  await http?.close();
  await t?.drop();
});

const runner = (worker: string) => new StepRunner({ db: t.db, graphs, worker, lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });

async function start(automation: string) {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: "{}",
    body: { id: `l${++n}`, n },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1", [runId]);
  return { runId, stepId: stepId as string };
}

/** Workers taking due ready steps round-robin, each at most `slots` at a time, until `done` or the deadline. */
async function drain(runners: StepRunner[], stepIds: string[], done: () => Promise<boolean>, slots = 8, ms = 30_000) {
  const deadline = Date.now() + ms;
  const busy = new Set<string>();
  let turn = 0;
  while (Date.now() < deadline && !(await done())) {
    const due = await rows("SELECT id FROM steps WHERE id = ANY($1) AND status = 'ready' AND available_at <= now()", [stepIds]);
    for (const { id } of due) {
      if (busy.has(id) || busy.size >= slots * runners.length) continue;
      busy.add(id);
      const r = runners[turn++ % runners.length] as StepRunner;
      r.run(id).finally(() => busy.delete(id));
    }
    await new Promise((res) => setTimeout(res, 30));
  }
  while (busy.size) await new Promise((res) => setTimeout(res, 20));
}

describe("the lane catalog", () => {
  it("takes validated per-deployment overrides and refuses bad ones with a clear message", () => {
    const l = resolveLanes('{"io":{"concurrency":64,"leaseMs":9000,"retry":{"capMs":60000}}}');
    expect(l.io).toMatchObject({ concurrency: 64, leaseMs: 9000, heartbeatMs: 3000, retry: { maxAttempts: 8, baseMs: 1000, capMs: 60000 } });
    expect(l.slow.retry.maxAttempts).toBe(2);
    expect(() => resolveLanes('{"slow":{"retry":{"maxAttempts":5}}}')).toThrow(/at most 2 attempts/);
    expect(() => resolveLanes('{"io":{"leaseMs":1000,"heartbeatMs":2000}}')).toThrow(/shorter than its leaseMs/);
    expect(() => resolveLanes('{"io":{"concurency":3}}')).toThrow(/HOLDFAST_LANES/);
    expect(() => resolveLanes("{nope")).toThrow(/not JSON/);
  });
});

describe("per-connection caps", () => {
  it("a step with no free slot goes back unstarted, without using one of its attempts", async () => {
    crm.behave({ delayMs: 300 });
    try {
      const steps = await Promise.all(Array.from({ length: 4 }, () => start("capped")));
      const results = await Promise.all(steps.map((s, i) => runner(`w${i}`).run(s.stepId)));
      expect(results.filter((r) => r.kind === "settled")).toHaveLength(3);
      expect(results.filter((r) => r.kind === "deferred")).toHaveLength(1);
      const deferred = steps[results.findIndex((r) => r.kind === "deferred")] as { stepId: string };
      expect(await rows("SELECT status, attempt, deferrals FROM steps WHERE id = $1", [deferred.stepId])).toEqual([{ status: "ready", attempt: 1, deferrals: 1 }]);
      expect(await rows("SELECT type FROM run_events WHERE step_id = $1 AND type = 'step.deferred'", [deferred.stepId])).toHaveLength(1);
      expect(await rows("SELECT count(*)::int AS n FROM effects WHERE step_id = $1", [deferred.stepId])).toEqual([{ n: 0 }]); // its claim given back
    } finally {
      crm.behave({ delayMs: 0 });
    }
  });

  it("4 workers never have more than 3 calls in flight on the capped connection, while another connection's calls proceed", async () => {
    crm.behave({ delayMs: 150 });
    try {
      const capped = await Promise.all(Array.from({ length: 24 }, () => start("capped")));
      const free = await Promise.all(Array.from({ length: 24 }, () => start("free")));
      const ids = [...capped, ...free].map((s) => s.stepId);
      const workers = Array.from({ length: 4 }, (_, i) => runner(`worker-${i}`));
      await drain(workers, ids, async () => (await rows("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1) AND status = 'done'", [ids]))[0].n === ids.length);
      expect(await rows("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1) AND status = 'done'", [ids])).toEqual([{ n: 48 }]);
      console.log(`cap 3: most in flight on the capped connection ${crm.maxInFlight("capped")}, on the free one ${crm.maxInFlight("free")}`);
      expect(crm.maxInFlight("capped")).toBe(3);
      expect(crm.maxInFlight("free")).toBeGreaterThan(3);
    } finally {
      crm.behave({ delayMs: 0 });
    }
  });
});

describe("retries", () => {
  it("100 steps failing at the same moment retry spread across the backoff window, not in lockstep", async () => {
    http.behave({ failFirst: 1, failStatus: 503 });
    try {
      const steps = await Promise.all(Array.from({ length: 100 }, () => start("http")));
      const r = runner("w");
      const results = await Promise.all(steps.map((s) => r.run(s.stepId)));
      expect(results.every((x) => x.kind === "retry_scheduled")).toBe(true);
      const due = (
        await rows("SELECT EXTRACT(EPOCH FROM available_at - updated_at) * 1000 AS ms FROM steps WHERE id = ANY($1) ORDER BY 1", [steps.map((s) => s.stepId)])
      ).map((x) => Number(x.ms));
      const window = Math.min(lanes.io.retry.capMs, lanes.io.retry.baseMs * 2); // attempt 1: [0, base * 2^1)
      const spread = (due.at(-1) ?? 0) - (due[0] ?? 0);
      const distinct = new Set(due.map((d) => Math.round(d / 10))).size;
      console.log(`100 simultaneous failures retry between ${Math.round(due[0] ?? 0)} and ${Math.round(due.at(-1) ?? 0)} ms (window ${window} ms, spread ${Math.round(spread)} ms, ${distinct} distinct 10 ms slots)`);
      expect(due.every((d) => d >= 0 && d < window + 50)).toBe(true);
      expect(spread).toBeGreaterThan(window * 0.8);
      expect(distinct).toBeGreaterThan(60);
    } finally {
      http.behave({ failFirst: 0 });
    }
  });
});

describe("the circuit breaker", () => {
  it("opens after the threshold and parks the rest; one probe after the cool-down closes it and every step completes", { timeout: 240_000 }, async () => {
    crm.behave({ failFirst: 1_000, failStatus: 500 });
    const steps = await Promise.all(Array.from({ length: 30 }, () => start("flaky")));
    const ids = steps.map((s) => s.stepId);
    const workers = [runner("a"), runner("b")];
    const callsTo = () => [...crm.upserts.entries()].filter(([k]) => steps.some((s) => k.startsWith(s.runId))).reduce((a, [, c]) => a + c, 0);
    // A first pass: calls fail until the breaker opens; the rest park without calling.
    await drain(workers, ids, async () => (await rows("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1) AND status = 'parked'", [ids]))[0].n >= 17, 4, 40_000);
    const [conn] = await rows("SELECT breaker_state FROM connections WHERE name = 'flaky'");
    expect(conn.breaker_state).toBe("open");
    // Let the calls that passed the gate before it opened finish, and the earlier failures' retries park.
    const settledAgain = async () => (await rows("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1) AND status IN ('ready', 'running')", [ids]))[0].n === 0;
    await drain(workers, ids, settledAgain, 4, 40_000);
    const failedCalls = callsTo();
    expect(failedCalls).toBeLessThanOrEqual(5 + 8); // the threshold (5) and the calls already in flight (2 workers x 4 slots)
    // While it stays down, each cool-down lets one probe through, which fails and re-opens it: calls grow by at most
    // one per cool-down, however many steps are waiting.
    const downSince = Date.now();
    const wakeProbe = async () => {
      // The cool-down is measured by the database clock: ask until it has passed (the sweeper asks every tick).
      for (let i = 0; i < 100; i++) {
        const woken = await breakersWakeProbes(t.db, "test");
        if (woken) return woken;
        await new Promise((r) => setTimeout(r, 100));
      }
      return 0;
    };
    expect(await wakeProbe()).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    await drain(workers, ids, settledAgain, 4, 40_000);
    expect(await rows("SELECT breaker_state FROM connections WHERE name = 'flaky'")).toEqual([{ breaker_state: "open" }]);
    const probes = callsTo() - failedCalls;
    const coolDowns = Math.ceil((Date.now() - downSince) / 800);
    expect(probes).toBeGreaterThanOrEqual(1);
    expect(probes).toBeLessThanOrEqual(coolDowns + 1);
    // The provider recovers: after the next cool-down the probe succeeds, the breaker closes, parked steps resume.
    crm.behave({ failFirst: 0 });
    expect(await wakeProbe()).toBe(1);
    await drain(workers, ids, async () => (await rows("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1) AND status = 'done'", [ids]))[0].n === 30, 4, 40_000);
    const left = await rows("SELECT id, status, error, attempt, deferrals, available_at > now() AS later FROM steps WHERE id = ANY($1) AND status <> 'done'", [ids]);
    if (left.length) console.log("not done:", JSON.stringify(left), JSON.stringify(await rows("SELECT breaker_state, breaker_probe FROM connections WHERE name = 'flaky'")));
    expect(await rows("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1) AND status = 'done'", [ids])).toEqual([{ n: 30 }]);
    expect(await rows("SELECT breaker_state FROM connections WHERE name = 'flaky'")).toEqual([{ breaker_state: "closed" }]);
    console.log(`breaker: ${failedCalls} calls before it opened, ${probes} probe calls while down, ${callsTo()} calls in all for 30 steps`);
    expect(callsTo()).toBeLessThanOrEqual(failedCalls + probes + 1 + 30);
  });
});
