import { Redis } from "ioredis";
import { type HttpTarget, httpChainGraph, publish, startHttpTarget, startTestDeployment, startTestRun, type TestDeployment, testRedisUrl, waitFor } from "@holdfast/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

let d: TestDeployment;
let target: HttpTarget;

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
});
afterEach(async () => d.stopApps());
afterAll(async () => d?.stop());

const env = (over: Record<string, string> = {}) => d.quickEnv({ LANE_LEASE_MS: "30000", SHUTDOWN_GRACE_MS: "10000", ...over });
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const start = async (automation: string, key: string) => ({ runId: await startTestRun(d.t.db, automation, {}, { webhookId: key }) });
const stepOf = async (runId: string) => (await q("SELECT id, status, attempt, owner, output FROM steps WHERE run_id = $1", [runId]))[0];

describe("fencing", () => {
  it("a worker frozen past its lease before settling is fenced out: its settle changes 0 rows", async () => {
    await publish(d.t.db, httpChainGraph(target.url, 1), { automation: "fencing-settle" });
    target.behave({ delayMs: 0 });
    const lease = { LANE_LEASE_MS: "1500", LANE_HEARTBEAT_MS: "500" };
    for (const app of ["relay", "engine", "sweeper"] as const) d.spawn({ app, env: env() });
    // A freezes itself after the HTTP call returned, before its settle (SIGSTOP at worker.before_settle).
    const a = d.spawn({ app: "lane-worker", env: env({ ...lease, HOLDFAST_PAUSE_AT: "worker.before_settle" }), label: "worker-a" });
    await a.waitForOutput(/lane worker ready/);
    const { runId } = await start("fencing-settle", "fence-settle-1");
    await a.waitForOutput(/pausepoint worker.before_settle/);
    d.spawn({ app: "lane-worker", env: env(lease), label: "worker-b" });
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 30_000, "B to finish the run");
    a.signal("SIGCONT");
    await a.waitForOutput(/settle changed 0 rows/, 10_000);
    const settles = await q("SELECT attempt FROM run_events WHERE run_id = $1 AND type = 'step.succeeded'", [runId]);
    expect(settles).toEqual([{ attempt: 2 }]);
    expect(await stepOf(runId)).toMatchObject({ status: "done", attempt: 2 });
    expect(a.exits).toEqual([]);
  });

  it("a worker frozen past its lease mid-call is fenced out: its heartbeat changes 0 rows and it stops the step", async () => {
    await publish(d.t.db, httpChainGraph(target.url, 1), { automation: "fencing" });
    target.behave({ delayMs: 2_000, delayFirstOnly: true });
    const lease = { LANE_LEASE_MS: "1500", LANE_HEARTBEAT_MS: "500" };
    for (const app of ["relay", "engine", "sweeper"] as const) d.spawn({ app, env: env() });
    const a = d.spawn({ app: "lane-worker", env: env(lease), label: "worker-a" });
    await a.waitForOutput(/lane worker ready/);
    const { runId } = await start("fencing", "fence-1");
    // Freeze A while its call is in flight: the provider has the request, A has no answer yet.
    await waitFor(async () => target.calls.get(`${runId}/call_1/1`) === 1, 20_000, "worker A's call to reach the provider");
    a.signal("SIGSTOP");
    d.spawn({ app: "lane-worker", env: env(lease), label: "worker-b" });
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 30_000, "B to finish the run");
    expect(await stepOf(runId)).toMatchObject({ status: "done", attempt: 2 });
    await new Promise((r) => setTimeout(r, 500)); // A's delayed answer is now in its socket
    a.signal("SIGCONT");
    await a.waitForOutput(/heartbeat changed 0 rows/, 10_000);
    // Whichever comes first after SIGCONT, the aborted call or its answer, A writes nothing.
    await a.waitForOutput(/stopped without settling|settle changed 0 rows/, 10_000);
    const settles = await q("SELECT attempt, worker FROM run_events WHERE run_id = $1 AND type = 'step.succeeded'", [runId]);
    expect(settles).toHaveLength(1);
    expect(settles[0].attempt).toBe(2);
    expect(settles[0].worker).toMatch(/^lane-io@/);
    expect(a.exits).toEqual([]); // A stopped the step, not the process
    expect(target.calls.get(`${runId}/call_1/1`)).toBe(2); // same effect key both times
  });
});

describe("two workers on one effect key", () => {
  it("never overlap at the provider: B waits out frozen A's effect lease, then re-sends only after A's call was answered", async () => {
    await publish(d.t.db, httpChainGraph(target.url, 1), { automation: "race" });
    // The provider answers within the lease (800 ms < 2 s): the bound that makes "no overlap" hold.
    target.behave({ delayMs: 800, delayFirstOnly: false });
    const lease = { LANE_LEASE_MS: "2000", LANE_HEARTBEAT_MS: "500" };
    for (const app of ["relay", "engine", "sweeper"] as const) d.spawn({ app, env: env() });
    const a = d.spawn({ app: "lane-worker", env: env(lease), label: "worker-a" });
    await a.waitForOutput(/lane worker ready/);
    const { runId } = await start("race", "race-1");
    const key = `${runId}/call_1/1`;
    await waitFor(async () => target.calls.get(key) === 1, 20_000, "worker A's call to reach the provider");
    a.signal("SIGSTOP");
    d.spawn({ app: "lane-worker", env: env(lease), label: "worker-b" });
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 30_000, "B to finish the run");
    a.signal("SIGCONT");
    expect(target.calls.get(key)).toBe(2); // B re-sent with the same key (the provider answered A's into a frozen socket)
    expect(target.maxConcurrent(key)).toBe(1); // ... but never while A's call was still being processed
    expect(target.effects()).toBeGreaterThanOrEqual(1);
    const [effect] = await q("SELECT status, attempts FROM effects WHERE key = $1", [key]);
    expect(effect).toEqual({ status: "settled", attempts: 2 });
  });
});

describe("shutdown", () => {
  it("on SIGTERM a worker stops claiming, waits the grace period, then releases its lease for another worker at once", async () => {
    await publish(d.t.db, httpChainGraph(target.url, 1), { automation: "shutdown" });
    target.behave({ delayMs: 20_000, delayFirstOnly: true });
    for (const app of ["relay", "engine"] as const) d.spawn({ app, env: env() });
    const a = d.spawn({ app: "lane-worker", env: env({ SHUTDOWN_GRACE_MS: "500", LANE_LEASE_MS: "60000" }), label: "worker-a" });
    const { runId } = await start("shutdown", "term-1");
    await waitFor(async () => (await stepOf(runId))?.status === "running", 20_000, "worker A to claim");
    // A's call must be in flight when it is told to stop (otherwise B's call is the provider's slow first one).
    await waitFor(async () => target.calls.get(`${runId}/call_1/1`) === 1, 20_000, "worker A's call to reach the provider");
    const exit = await a.stop();
    expect(exit.code).toBe(0);
    expect(await stepOf(runId)).toMatchObject({ status: "ready", owner: null, attempt: 1 });
    const released = await q("SELECT type FROM run_events WHERE run_id = $1 AND type = 'step.released'", [runId]);
    expect(released).toHaveLength(1);
    // No sweeper runs here and the 60 s lease never lapsed: B gets the step because A released it.
    d.spawn({ app: "lane-worker", env: env(), label: "worker-b" });
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 20_000, "B to finish");
    expect(await stepOf(runId)).toMatchObject({ status: "done", attempt: 2 });
  });
});

describe("lost queue messages", () => {
  it("runs still complete when Redis loses every wake-up: the sweeper finds the quiet runs", async () => {
    await publish(d.t.db, httpChainGraph(target.url, 2), { automation: "lossy" });
    target.behave({ delayMs: 0 });
    // Relay publishes while no engine is running; then the queue's keys are wiped.
    d.spawn({ app: "relay", env: env() });
    const runIds: string[] = [];
    for (let i = 0; i < 5; i++) runIds.push((await start("lossy", `lost-${i}`)).runId);
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL"))[0].n === 0, 20_000, "relay to publish");
    await d.clearRedis();
    const redis = new Redis(testRedisUrl);
    expect(await redis.keys(`${d.prefix}:*`)).toEqual([]);
    redis.disconnect();
    for (const app of ["engine", "lane-worker", "sweeper"] as const) d.spawn({ app, env: env() });
    await waitFor(
      async () => (await q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [runIds]))[0].n === runIds.length,
      40_000,
      "every run to complete",
    );
    // The lost wake-ups were the first steps' (a start commits its first walk): the sweeper re-woke each step.
    const rewoken = await q("SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND type = 'step.rewoken'", [runIds]);
    expect(rewoken[0].n).toBeGreaterThanOrEqual(runIds.length);
  });
});

describe("wake-ups without Redis", () => {
  it("with WAKEUPS=poll and Redis unreachable, runs complete by polling the outbox", async () => {
    await publish(d.t.db, httpChainGraph(target.url, 3), { automation: "no-redis" });
    target.behave({ delayMs: 0, failFirst: 0 });
    const e = env({ WAKEUPS: "poll", POLL_INTERVAL_MS: "100", REDIS_URL: "redis://127.0.0.1:1" });
    for (const app of ["engine", "lane-worker", "sweeper"] as const) d.spawn({ app, env: e });
    const runIds: string[] = [];
    for (let i = 0; i < 5; i++) runIds.push((await start("no-redis", `poll-${i}`)).runId);
    await waitFor(
      async () => (await q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [runIds]))[0].n === runIds.length,
      30_000,
      "every run to complete without Redis",
    );
    expect(await q("SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL AND available_at <= now()")).toEqual([{ n: 0 }]);
    const relay = d.spawn({ app: "relay", env: e });
    await relay.waitForOutput(/must not run/);
  });
});

describe("sweeper election (the due sweep and every other sweep run only on the leader)", () => {
  it("one sweeper leads; when it is killed the standby takes over once the lease ran out, never before", async () => {
    const e = env({ LEADER_LEASE_MS: "1500", SWEEP_INTERVAL_MS: "200" });
    const s1 = d.spawn({ app: "sweeper", env: e, label: "sweeper-1" });
    const s2 = d.spawn({ app: "sweeper", env: e, label: "sweeper-2" });
    const owner = async () => (await q("SELECT owner FROM leader_leases WHERE name = 'sweeper' AND lease_until > now()"))[0]?.owner as string | undefined;
    const first = await waitFor(owner, 20_000, "a leader");
    const leader = first.endsWith(`:${s1.pid()}`) ? s1 : s2;
    const standby = leader === s1 ? s2 : s1;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await owner()).toBe(first); // renewed, not flapping
    expect(standby.output()).not.toMatch(/became sweeper leader/);
    leader.signal("SIGKILL");
    const killedAt = Date.now();
    // The killed leader's last lease (a renewal it had sent may still commit: read it a moment after).
    await new Promise((r) => setTimeout(r, 100));
    const last = (await q("SELECT owner, lease_until FROM leader_leases WHERE name = 'sweeper'"))[0] as { owner: string; lease_until: Date };
    expect(last.owner).toBe(first);
    const second = await waitFor(async () => {
      const o = await owner();
      return o && o !== first ? o : undefined;
    }, 10_000, "the standby to lead");
    const takeoverMs = Date.now() - killedAt;
    expect(second.endsWith(`:${standby.pid()}`)).toBe(true);
    // By the database's clock (a loaded machine's timers slip, so no wall-clock bound): the standby's lease began
    // after the killed leader's had run out, never while it held.
    const [took] = await q("SELECT acquired_at >= $1::timestamptz AS after, (extract(epoch FROM acquired_at - $1::timestamptz) * 1000)::int AS gap_ms FROM leader_leases WHERE name = 'sweeper'", [last.lease_until]);
    console.log(`standby took over the sweep ${takeoverMs} ms after the leader was killed, ${took?.gap_ms} ms after its lease ran out (lease 1500 ms, tick 200 ms)`);
    expect(took?.after).toBe(true);
  });
});
