import { createWakePublisher, queueNames } from "@holdfast/queue";
import { type AppProcess, type HttpTarget, httpChainGraph, publish, startHttpTarget, startTestDeployment, startTestRun, type TestDeployment, testRedisUrl, waitFor } from "@holdfast/testkit";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * First-step dispatch by LISTEN (issue 19 item 3): a lane worker takes a run's first step straight from the outbox on
 * its lane's NOTIFY, with no relay and no Redis job; with LISTEN_DISPATCH=off nothing moves until the relay publishes
 * it after its grace (the backstop, found by its poll: the relay is not told of first steps), or at once with no grace
 * (it then LISTENs on the lanes' channels); a worker whose LISTEN connection was cut looks for what it missed when it
 * subscribes again. A start that announces its first steps on Redis (queue/wake.ts) sends no NOTIFY: the worker takes
 * them on the announcement, and one lost (the starter died after its commit) is the relay's after its grace.
 */
let d: TestDeployment;
let target: HttpTarget;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
  await publish(d.t.db, httpChainGraph(target.url, 3), { automation: "chain" });
});
afterAll(async () => d?.stop());

async function start(name: "relay" | "lane-worker", extra: Record<string, string> = {}): Promise<AppProcess> {
  const [app] = await d.startApps([{ app: name, env: d.quickEnv({ ...(name === "lane-worker" ? { LANE: "io" } : {}), ...extra }) }], 60_000);
  return app as AppProcess;
}
const stop = (app: AppProcess) => app.stop();
const completed = (runIds: string[]) =>
  waitFor(async () => (await q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [runIds]))[0]?.n === runIds.length, 60_000, "the runs to complete");
/** Jobs ever added to the io lane's queue under this file's prefix (BullMQ's id counter). */
async function laneJobs(): Promise<number> {
  const redis = new Redis(testRedisUrl);
  try {
    return Number((await redis.get(`${d.prefix}:${queueNames.lane("io")}:id`)) ?? 0);
  } finally {
    redis.disconnect();
  }
}
let seq = 0;
const startRuns = (n: number, o: Parameters<typeof startTestRun>[3] = {}) =>
  Promise.all(Array.from({ length: n }, () => startTestRun(d.t.db, "chain", { id: `evt_${++seq}` }, o)));

describe("first steps taken on the lane's NOTIFY", () => {
  it("with no relay running, every run's first step is taken from the outbox and the runs complete; no job goes through Redis", async () => {
    const worker = await start("lane-worker");
    expect(worker.output()).toMatch(/"listenDispatch":true/);
    const runIds = await startRuns(20);
    await completed(runIds);
    expect(await q("SELECT count(*)::int AS n FROM outbox WHERE topic = 'step.ready' AND sent_at IS NULL")).toEqual([{ n: 0 }]);
    expect(await laneJobs()).toBe(0);
    // Each call made once (the target counts per Idempotency-Key).
    expect([...target.calls.values()].every((n) => n === 1)).toBe(true);
    expect(target.calls.size).toBe(60);
    const [lat] = await q(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, max(ms) AS max FROM (
         SELECT EXTRACT(EPOCH FROM (c.at - s.at)) * 1000 AS ms
         FROM run_events s JOIN run_events c ON c.run_id = s.run_id AND c.type = 'step.claimed' AND c.node_id = 'call_1'
         WHERE s.type = 'run.started' AND s.run_id = ANY($1)) x`,
      [runIds],
    );
    console.log(`start's commit to the first step's claim, 20 runs taken on NOTIFY: p50 ${Number(lat?.p50).toFixed(1)} ms, max ${Number(lat?.max).toFixed(1)} ms`);
    await stop(worker);
  });

  it("LISTEN_DISPATCH=off: the first step waits for the relay, which publishes it after its grace; the run completes", async () => {
    const worker = await start("lane-worker", { LISTEN_DISPATCH: "off" });
    const [runId] = await startRuns(1);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await q("SELECT status FROM steps WHERE run_id = $1", [runId])).toEqual([{ status: "ready" }]);
    const relay = await start("relay", { RELAY_STEP_READY_GRACE_MS: "200" });
    await completed([runId as string]);
    expect(await laneJobs()).toBeGreaterThan(0);
    await stop(relay);
    await stop(worker);
  });

  it("with no grace the relay hears first steps on the lanes' channels and on Redis and publishes them at once, not at its next poll", async () => {
    const worker = await start("lane-worker", { LISTEN_DISPATCH: "off" });
    // A poll a minute apart: only a notification can bring the relay to these steps before the wait below gives up.
    const relay = await start("relay", { RELAY_STEP_READY_GRACE_MS: "0", RELAY_POLL_MS: "60000" });
    await new Promise((r) => setTimeout(r, 500)); // the pass made as the relay starts listening is behind us
    const wake = createWakePublisher({ redis: testRedisUrl, prefix: d.prefix });
    expect(await wake.whenConnected(5_000)).toBe(true);
    // Three announced on Redis (which the relay subscribes to as well), then three told by NOTIFY.
    const done = (ids: string[]) =>
      waitFor(async () => (await q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [ids]))[0]?.n === ids.length, 20_000, "the runs to complete");
    await done(await startRuns(3, { wake }));
    await done(await startRuns(3));
    expect(await laneJobs()).toBeGreaterThan(0);
    await wake.close();
    await stop(relay);
    await stop(worker);
  });

  it("first steps announced on Redis, with no NOTIFY and no relay: the worker takes them on the announcement", async () => {
    const worker = await start("lane-worker");
    await new Promise((r) => setTimeout(r, 500)); // the look made as the worker subscribes is behind us
    const wake = createWakePublisher({ redis: testRedisUrl, prefix: d.prefix });
    expect(await wake.whenConnected(5_000)).toBe(true);
    const jobsBefore = await laneJobs();
    const runIds = await startRuns(5, { wake });
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'", [runIds]))[0]?.n === 5, 20_000, "the runs to complete");
    expect(await laneJobs()).toBe(jobsBefore);
    // Lost announcements (a starter killed between its commit and its publish): the relay delivers them after its grace.
    const lost = await startRuns(3, { wake: { connected: true, ready: () => {} } });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await q("SELECT count(*)::int AS n FROM steps WHERE run_id = ANY($1) AND status = 'ready'", [lost])).toEqual([{ n: 3 }]);
    const relay = await start("relay", { RELAY_STEP_READY_GRACE_MS: "200" });
    await completed(lost);
    await wake.close();
    await stop(relay);
    await stop(worker);
  });

  it("a worker whose LISTEN connection was cut subscribes again and takes the step it was not told about", async () => {
    const worker = await start("lane-worker");
    // No relay and no sweeper: only the worker can move these runs, and it was not listening when they started.
    await q("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'holdfast-lane-io-listen' AND datname = current_database()");
    const runIds = await startRuns(3);
    await completed(runIds);
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'holdfast-lane-io-listen' AND datname = current_database()"))[0]?.n === 1, 10_000, "the listener back");
    expect(worker.exits).toEqual([]);
    await stop(worker);
  });
});
