import { createTestDatabase, type HttpTarget, httpChainGraph, publish, startHttpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { requestCancel } from "../src/run/runs/cancel";
import type { ClaimedStep } from "../src/store/sql/steps";
import { stepsClaimIfLeaseFree, stepsHeartbeatIfToken } from "../src/store/sql/steps-claim";
import { type RunSettleRequest, stepsSettleIfToken } from "../src/store/sql/steps-settle";
import { ReadyDemand } from "../src/run/steps/ready-demand";
import { SettleBatcher } from "../src/run/steps/settle-batch";
import { Slots } from "../src/run/steps/slots";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { sweepOnce } from "../src/run/sweeper/sweep";
import { GraphCache } from "../src/versions/graph-cache";
import type { PlanRows } from "../src/store/sql/plan-rows";
import { effectKinds } from "../src/versions/kinds/registry";
import { stepsAfterSettle } from "../src/run/apply/inline";
import { walkOnAfterSettle } from "../src/run/steps/walk-on";
import { runEventsForRun, runEventsRenameChained } from "../src/store/sql/run-events";
import { stepsRenameNode } from "../src/store/sql/steps";

let t: TestDatabase;
let target: HttpTarget;
const graphs = new GraphCache();
const log = createLogger("test", "silent");
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  await publish(t.db, httpChainGraph(target.url, 2, { maxAttempts: 3 }));
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});
beforeEach(() => target.behave({ delayMs: 0, failFirst: 0, delayFirstOnly: false }));

const headers = (id: string) => ({ "webhook-id": id, "webhook-timestamp": null, "webhook-signature": null });
async function startAndWalk() {
  const key = `evt_${++n}`;
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: { n }, headers: headers(key), via: "test", auth: { kind: "operator" } });
  const orgId = (await t.sql.query("SELECT org_id FROM runs WHERE id = $1", [runId])).rows[0].org_id as string;
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  const step = (await t.sql.query("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId])).rows[0] as { id: string };
  return { runId, orgId, stepId: step.id };
}
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

describe("starting once", () => {
  it("commits the run with its first walk (step, step.ready outbox row, timeline); a repeat finds the same run", async () => {
    const a = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: {}, headers: headers("dup_1"), via: "test", auth: { kind: "operator" } });
    const b = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: {}, headers: headers("dup_1"), via: "test", auth: { kind: "operator" } });
    expect(a.duplicate).toBe(false);
    expect(b).toEqual({ ...a, duplicate: true });
    expect(await rows("SELECT topic FROM outbox WHERE run_id = $1", [a.runId])).toEqual([{ topic: "step.ready" }]);
    expect(await rows("SELECT node_id, status FROM steps WHERE run_id = $1", [a.runId])).toEqual([{ node_id: "call_1", status: "ready" }]);
    expect((await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [a.runId])).map((r) => r.type)).toEqual([
      "run.started",
      "run.walk_started",
      "step.scheduled",
      "run.duplicate_start",
    ]);
  });

  it("refuses to change or delete a published version, in the database", async () => {
    await expect(t.sql.query("UPDATE automation_versions SET graph = '{}'")).rejects.toThrow(/immutable/);
    await expect(t.sql.query("DELETE FROM automation_versions")).rejects.toThrow(/immutable/);
  });
});

describe("claim, heartbeat, settle: fenced by the attempt", () => {
  it("gives the claim a token, refuses a second claim while leased, and fences the old attempt out", async () => {
    const { stepId } = await startAndWalk();
    const a = await stepsClaimIfLeaseFree(t.sql, stepId, "worker-a", 30_000, effectKinds());
    expect(a?.attempt).toBe(1);
    expect(await stepsClaimIfLeaseFree(t.sql, stepId, "worker-b", 30_000, effectKinds())).toBeUndefined();
    // The lease lapses (moved in SQL, by the database clock); b takes over with a newer token.
    await t.sql.query("UPDATE steps SET lease_until = now() - interval '1 second' WHERE id = $1", [stepId]);
    const b = await stepsClaimIfLeaseFree(t.sql, stepId, "worker-b", 30_000, effectKinds());
    expect(b?.attempt).toBe(2);
    expect(await stepsHeartbeatIfToken(t.sql, stepId, 1, 30_000)).toBe(0);
    expect(await stepsSettleIfToken(t.sql, { step: { id: stepId, attempt: 1 }, worker: "worker-a", status: "done", output: { from: "a" } })).toMatchObject({
      changed: false,
    });
    expect(await stepsHeartbeatIfToken(t.sql, stepId, 2, 30_000)).toBe(1);
    expect(
      (await stepsSettleIfToken(t.sql, { step: { id: stepId, attempt: 2 }, worker: "worker-b", status: "done", output: { from: "b" } })).changed,
    ).toBe(true);
    expect(await rows("SELECT status, output, owner, lease_until FROM steps WHERE id = $1", [stepId])).toEqual([
      { status: "done", output: { from: "b" }, owner: null, lease_until: null },
    ]);
    const events = await rows("SELECT type, attempt, worker FROM run_events WHERE step_id = $1 ORDER BY id", [stepId]);
    expect(events).toEqual([
      { type: "step.scheduled", attempt: null, worker: "start" },
      { type: "step.claimed", attempt: 1, worker: "worker-a" },
      // The takeover says why attempt 2 started: attempt 1's lease lapsed (no sweeper needed to notice).
      { type: "step.lease_expired", attempt: 1, worker: "worker-b" },
      { type: "step.claimed", attempt: 2, worker: "worker-b" },
      { type: "step.succeeded", attempt: 2, worker: "worker-b" },
    ]);
    expect(await rows("SELECT payload->>'reason' AS reason FROM outbox WHERE run_id = (SELECT run_id FROM steps WHERE id = $1) AND topic = 'run.wake' ORDER BY id", [stepId])).toEqual([{ reason: "step_settled" }]);
  });
});

describe("a stale settle that carries a plan", () => {
  it("is refused as a whole: the run's seq, its steps and its timeline are as before", async () => {
    const { runId, stepId } = await startAndWalk();
    const a = await stepsClaimIfLeaseFree(t.sql, stepId, "worker-a", 30_000, effectKinds());
    await t.sql.query("UPDATE steps SET lease_until = now() - interval '1 second' WHERE id = $1", [stepId]);
    const b = await stepsClaimIfLeaseFree(t.sql, stepId, "worker-b", 30_000, effectKinds());
    expect(a && b).toBeTruthy();
    const before = await rows("SELECT seq, status FROM runs WHERE id = $1", [runId]);
    const events = await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [runId]);
    // worker-a's plan was computed at its claim, when the run's seq was what it still is: the run update matches,
    // the step fence does not, and everything the statement did is undone.
    const stale = await stepsSettleIfToken(t.sql, {
      step: { id: stepId, attempt: 1 },
      worker: "worker-a",
      status: "done",
      output: {},
      advance: {
        runSeq: a?.runSeq ?? 0n,
        rows: { steps: [], events: [{ orgId: a?.orgId ?? "", runId, type: "run.completed" }], outbox: [], finish: { status: "completed", error: null }, advanced: [], claim: null },
      },
    });
    expect(stale.changed).toBe(false);
    expect(await rows("SELECT seq, status FROM runs WHERE id = $1", [runId])).toEqual(before);
    expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [runId])).toEqual(events);
    expect(await rows("SELECT status, attempt FROM steps WHERE id = $1", [stepId])).toEqual([{ status: "running", attempt: 2 }]);
  });
});

describe("the step runner", () => {
  const runner = () => new StepRunner({ db: t.db, graphs, worker: "w1", lane: { ...lanes.io, retry: { maxAttempts: 3, baseMs: 10, capMs: 20 } }, log });

  it("performs the HTTP call with the effect key and settles it", async () => {
    const { runId, stepId } = await startAndWalk();
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(target.calls.get(`${runId}/call_1/1`)).toBe(1);
    const [step] = await rows("SELECT status, output FROM steps WHERE id = $1", [stepId]);
    expect(step).toMatchObject({ status: "done", output: { status: 200, body: { key: `${runId}/call_1/1` } } });
    expect((await runner().run(stepId)).kind).toBe("not_claimable");
  });

  it("schedules a retry with backoff on 503 and fails the step after maxAttempts", async () => {
    target.behave({ failFirst: 99, failStatus: 503 });
    const { stepId } = await startAndWalk();
    expect((await runner().run(stepId)).kind).toBe("retry_scheduled");
    const [ready] = await rows("SELECT status, attempt, available_at > now() - interval '1 second' AS later FROM steps WHERE id = $1", [stepId]);
    expect(ready).toMatchObject({ status: "ready", attempt: 1, later: true });
    // A wake-up that arrives before available_at (by the database clock) claims nothing and says when to return.
    await t.sql.query("UPDATE steps SET available_at = now() + interval '5 seconds' WHERE id = $1", [stepId]);
    const early = await runner().run(stepId);
    expect(early.kind).toBe("not_due");
    expect(early.kind === "not_due" && early.inMs > 4000 && early.inMs <= 5000).toBe(true);
    await t.sql.query("UPDATE steps SET available_at = now() WHERE id = $1", [stepId]);
    expect((await runner().run(stepId)).kind).toBe("retry_scheduled");
    await t.sql.query("UPDATE steps SET available_at = now() WHERE id = $1", [stepId]);
    expect((await runner().run(stepId)).kind).toBe("failed");
    const [failed] = await rows("SELECT status, error FROM steps WHERE id = $1", [stepId]);
    expect(failed).toMatchObject({ status: "failed", error: { code: "http_503", exhausted: true, attempts: 3 } });
  });

  it("honours Retry-After and never retries a 4xx", async () => {
    target.behave({ failFirst: 1, failStatus: 429, retryAfter: "120" });
    const a = await startAndWalk();
    expect((await runner().run(a.stepId)).kind).toBe("retry_scheduled");
    const [r] = await rows("SELECT EXTRACT(EPOCH FROM available_at - updated_at) AS secs FROM steps WHERE id = $1", [a.stepId]);
    expect(Number(r.secs)).toBeCloseTo(120, 0);
    target.behave({ failFirst: 1, failStatus: 404, retryAfter: undefined });
    const b = await startAndWalk();
    expect((await runner().run(b.stepId)).kind).toBe("failed");
  });

  it("a retry's wake-up and a shutdown's release name the step on its lane, due when the step is (the release's now)", async () => {
    const wakeups = (stepId: string) =>
      rows(
        `SELECT o.payload, o.available_at = s.available_at AS "withStep", o.available_at <= now() AS due FROM outbox o JOIN steps s ON s.id = $1
         WHERE o.topic = 'step.ready' AND o.payload->>'stepId' = $1 ORDER BY o.id`,
        [stepId],
      );
    target.behave({ failFirst: 1, failStatus: 503 });
    const a = await startAndWalk();
    expect((await runner().run(a.stepId)).kind).toBe("retry_scheduled");
    const retried = await wakeups(a.stepId);
    expect(retried.at(-1)).toMatchObject({ payload: { orgId: a.orgId, runId: a.runId, stepId: a.stepId, lane: "io" }, withStep: true });

    const b = await startAndWalk();
    const r = new StepRunner({
      db: t.db,
      graphs,
      worker: "w1",
      lane: lanes.io,
      log,
      handlers: { http_request: ({ signal }) => new Promise((done) => signal.addEventListener("abort", () => done({ kind: "done", output: {} }))) },
    });
    const running = r.run(b.stepId);
    await waitUntil(async () => (await rows("SELECT status FROM steps WHERE id = $1", [b.stepId]))[0]?.status === "running");
    expect(r.abortAll()).toBe(1);
    expect((await running).kind).toBe("released");
    expect((await wakeups(b.stepId)).at(-1)).toEqual({ payload: { orgId: b.orgId, runId: b.runId, stepId: b.stepId, lane: "io" }, withStep: true, due: true });
    expect(await rows("SELECT type, worker FROM run_events WHERE step_id = $1 ORDER BY id DESC LIMIT 1", [b.stepId])).toEqual([{ type: "step.released", worker: "w1" }]);
  });
});

async function waitUntil(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) if (await check()) return;
  throw new Error("condition not met in time");
}

describe("the engine walk and the sweeper", () => {
  it("a settle moves the run on in the same transaction; the engine's wake-ups then find nothing to do", async () => {
    const { runId, orgId, stepId } = await startAndWalk();
    const r = new StepRunner({ db: t.db, graphs, worker: "w1", lane: lanes.io, log });
    expect((await r.run(stepId)).kind).toBe("settled");
    const [second] = await rows("SELECT id, status FROM steps WHERE run_id = $1 AND node_id = 'call_2'", [runId]);
    expect(second.status).toBe("ready");
    expect((await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" })).commands).toEqual([]);
    expect((await r.run(second.id)).kind).toBe("settled");
    expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
    const types = (await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((e) => e.type);
    expect(types).toEqual([
      "run.started",
      "run.walk_started",
      "step.scheduled",
      "step.claimed",
      "step.succeeded",
      "step.scheduled",
      "step.claimed",
      "step.succeeded",
      "run.completed",
    ]);
    // Neither the start nor the settles needed the engine: no run.wake at all.
    expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE run_id = $1 AND topic = 'run.wake'", [runId])).toEqual([{ n: 0 }]);
  });

  it("leaves the walk to the engine when the run changed after the claim", async () => {
    const { runId, orgId, stepId } = await startAndWalk();
    const claimed = await stepsClaimIfLeaseFree(t.sql, stepId, "w1", 30_000, effectKinds());
    if (!claimed) throw new Error("no claim");
    await t.sql.query("UPDATE runs SET seq = seq + 1 WHERE id = $1", [runId]); // someone else moved the run on
    const id = "stp_never_inserted";
    const plan: PlanRows = {
      steps: [{ id, orgId, runId, nodeId: "call_2", kind: "http_request", lane: "io", iteration: 1, maxAttempts: 3, status: "ready" }],
      events: [{ orgId, runId, type: "step.scheduled", stepId: id, nodeId: "call_2", lane: "io", worker: "w1", data: { iteration: 1 } }],
      outbox: [{ orgId, runId, topic: "step.ready", payload: { orgId, runId, stepId: id, lane: "io" } }],
      finish: null,
      advanced: [claimed.id],
      claim: null,
    };
    const settled = await stepsSettleIfToken(t.sql, {
      step: claimed,
      worker: "w1",
      status: "done",
      output: {},
      advance: { runSeq: claimed.runSeq, rows: plan },
    });
    expect(settled).toMatchObject({ changed: true, advanced: false, steps: [], claimed: null });
    expect(await rows("SELECT count(*)::int AS n FROM steps WHERE run_id = $1", [runId])).toEqual([{ n: 1 }]);
    expect((await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" })).commands).toEqual(["mark_advanced", "take_edge", "schedule_step"]);
  });

  it("reclaims an expired lease, re-wakes a lost step wake-up and a stalled run", async () => {
    const { runId, stepId } = await startAndWalk();
    await stepsClaimIfLeaseFree(t.sql, stepId, "dead-worker", 30_000, effectKinds());
    await t.sql.query("UPDATE steps SET lease_until = now() - interval '1 second' WHERE id = $1", [stepId]);
    await t.sql.query("UPDATE outbox SET sent_at = now()");
    const first = await sweepOnce(t.db, { staleSeconds: 5, batchSize: 100, outboxRetentionSeconds: 3600 });
    expect(first.leasesReclaimed).toBe(1);
    expect(await rows("SELECT status, owner FROM steps WHERE id = $1", [stepId])).toEqual([{ status: "ready", owner: null }]);

    // The step's wake-up is lost: after the stale interval the sweeper wakes it again (once per interval).
    await t.sql.query("UPDATE outbox SET sent_at = now()");
    await t.sql.query(
      "UPDATE steps SET available_at = now() - interval '10 s', updated_at = now() - interval '10 s', woken_at = now() - interval '10 s' WHERE id = $1",
      [stepId],
    );
    const second = await sweepOnce(t.db, { staleSeconds: 5, batchSize: 100, outboxRetentionSeconds: 3600 });
    expect(second.stepsRewoken).toBeGreaterThanOrEqual(1);
    expect((await sweepOnce(t.db, { staleSeconds: 5, batchSize: 100, outboxRetentionSeconds: 3600 })).stepsRewoken).toBe(0);

    // The step settles through the engine path but its run.wake is lost: the run is quiet and gets a fresh wake-up.
    const again = await stepsClaimIfLeaseFree(t.sql, stepId, "w1", 30_000, effectKinds());
    if (!again) throw new Error("no claim");
    expect((await stepsSettleIfToken(t.sql, { step: again, worker: "w1", status: "done", output: {} })).changed).toBe(true);
    await t.sql.query("UPDATE outbox SET sent_at = now()");
    await t.sql.query("UPDATE runs SET updated_at = now() - interval '10 s' WHERE id = $1", [runId]);
    await t.sql.query("UPDATE steps SET updated_at = now() - interval '10 s' WHERE run_id = $1", [runId]);
    const third = await sweepOnce(t.db, { staleSeconds: 5, batchSize: 100, outboxRetentionSeconds: 3600 });
    expect(third.runsRewoken).toBe(1);
    const types = (await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["step.lease_expired", "step.rewoken", "run.rewoken"]));
  });

  it("cancels a waiting run at once, and a run with an effect in flight when it settles", async () => {
    const waiting = await startAndWalk();
    expect(await requestCancel(t.db, graphs, waiting.orgId, waiting.runId, "asked to stop", "test")).toEqual({ state: "cancelled", status: "cancelled" });
    expect(await rows("SELECT status FROM steps WHERE run_id = $1", [waiting.runId])).toEqual([{ status: "cancelled" }]);

    const busy = await startAndWalk();
    const claimed = await stepsClaimIfLeaseFree(t.sql, busy.stepId, "w1", 30_000, effectKinds());
    expect((await requestCancel(t.db, graphs, busy.orgId, busy.runId, "asked to stop", "test")).state).toBe("requested");
    await stepsSettleIfToken(t.sql, { step: { id: busy.stepId, attempt: claimed?.attempt ?? 0 }, worker: "w1", status: "done", output: {} });
    expect(await advanceRun(t.db, graphs, { orgId: busy.orgId, runId: busy.runId, reason: "step_settled" })).toMatchObject({ status: "cancelled" });
    expect(await rows("SELECT count(*)::int AS n FROM steps WHERE run_id = $1", [busy.runId])).toEqual([{ n: 1 }]);
  });
});

describe("local dispatch", () => {
  it("a settle claims the next step on the worker's lane in the same commit; the slot runs the whole chain", async () => {
    const { runId, stepId } = await startAndWalk();
    const r = new StepRunner({ db: t.db, graphs, worker: "w1", lane: lanes.io, log, localDispatch: { maxChain: 10 } });
    expect(await r.run(stepId)).toMatchObject({ kind: "settled", chained: 1 });
    expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
    // The chained step needed no wake-up: only the first step's step.ready exists.
    expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE run_id = $1 AND topic = 'step.ready'", [runId])).toEqual([{ n: 1 }]);
    // The chained step was scheduled and claimed in the settle's commit by its worker: no row of its own; the settle's
    // row says it (data.chained), and the timeline shows it as the step's step.claimed, with its iteration.
    const types = (await rows("SELECT type FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((e) => e.type);
    expect(types.slice(-3)).toEqual(["step.succeeded", "step.succeeded", "run.completed"]);
    const [chained] = await rows("SELECT id FROM steps WHERE run_id = $1 AND id <> $2", [runId, stepId]);
    expect(await rows("SELECT step_id AS \"stepId\", data FROM run_events WHERE run_id = $1 AND type = 'step.succeeded' ORDER BY id LIMIT 1", [runId])).toEqual([
      { stepId, data: { chained: { nodeId: expect.any(String), iteration: 1 } } },
    ]);
    const timeline = (await runEventsForRun(t.db, (await rows("SELECT org_id FROM runs WHERE id = $1", [runId]))[0]?.org_id, runId)).slice(-4);
    expect(timeline.slice(0, 3).map((e) => [e.type, e.stepId, e.attempt, e.worker, e.data])).toEqual([
      ["step.succeeded", stepId, 1, "w1", null],
      ["step.claimed", chained?.id, 1, "w1", { iteration: 1 }],
      ["step.succeeded", chained?.id, 1, "w1", null],
    ]);
    expect(timeline[3]?.type).toBe("run.completed");
    const orgId = (await rows("SELECT org_id FROM runs WHERE id = $1", [runId]))[0]?.org_id;
    // A migration renames the claimed step's node (migrate.ts: stepsRenameNode, then runEventsRenameChained), and the
    // new version has a node by the old name with a step at the same iteration: the claim stays the renamed step's.
    const oldNode = (await rows("SELECT node_id FROM steps WHERE id = $1", [chained?.id]))[0]?.node_id as string;
    await t.db.$transaction(async (tx) => {
      await stepsRenameNode(tx, orgId, runId, oldNode, "renamed");
      expect(await runEventsRenameChained(tx, orgId, runId, oldNode, "renamed")).toBe(1);
    });
    await rows(
      "INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, max_attempts, status) SELECT org_id, run_id, $2, 1, kind, lane, 1, 'cancelled' FROM steps WHERE id = $1",
      [chained?.id, oldNode],
    );
    expect((await runEventsForRun(t.db, orgId, runId)).slice(-4).map((e) => [e.type, e.stepId])).toEqual([
      ["step.succeeded", stepId],
      ["step.claimed", chained?.id],
      ["step.succeeded", chained?.id],
      ["run.completed", null],
    ]);
    // A row that names the step itself (as older rows do) reads the same; one whose step is no longer kept shows its
    // claim without an id.
    await rows("UPDATE run_events SET data = jsonb_build_object('chained', jsonb_build_object('stepId', $2::text, 'nodeId', data->'chained'->'nodeId', 'iteration', 1)) WHERE run_id = $1 AND data ? 'chained'", [runId, chained?.id]);
    expect((await runEventsForRun(t.db, orgId, runId)).slice(-4).map((e) => [e.type, e.stepId])).toEqual([
      ["step.succeeded", stepId],
      ["step.claimed", chained?.id],
      ["step.succeeded", chained?.id],
      ["run.completed", null],
    ]);
    await rows("UPDATE run_events SET data = jsonb_build_object('chained', jsonb_build_object('nodeId', 'removed', 'iteration', 1)) WHERE run_id = $1 AND data ? 'chained'", [runId]);
    expect((await runEventsForRun(t.db, orgId, runId)).slice(-4).map((e) => [e.type, e.stepId, e.nodeId])).toEqual([
      ["step.succeeded", stepId, expect.any(String)],
      ["step.claimed", null, "removed"],
      ["step.succeeded", chained?.id, expect.any(String)],
      ["run.completed", null, "finish"],
    ]);
  });
});

describe("a slot whose run finished runs a first step its settle took", () => {
  /** Runs started (first steps ready, their step.ready rows due), nothing else left due in the outbox. */
  async function startedRuns(count: number): Promise<string[]> {
    await t.sql.query("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: {}, headers: headers(`evt_${++n}`), via: "test", auth: { kind: "operator" } });
      ids.push(runId);
    }
    return ids;
  }
  const runner = (demand: ReadyDemand, maxChain = 100) =>
    new StepRunner({ db: t.db, graphs, worker: "w1", lane: lanes.io, log, localDispatch: { maxChain }, settleBatch: { max: 32, parallel: 1 }, readyDemand: demand });
  const statuses = async (runIds: string[]) => (await rows("SELECT status FROM runs WHERE id = ANY($1)", [runIds])).map((r) => r.status);

  it("while a look is owed: one slot runs every waiting run to its end, each first step taken by the settle before it", async () => {
    const runIds = await startedRuns(3);
    const demand = new ReadyDemand(new Slots(4));
    demand.notified();
    const r = runner(demand);
    const [first] = (await r.takeReady(1)).claimed;
    if (!first) throw new Error("nothing taken");
    // 3 runs of 2 steps in one slot: the first step taken by the listener's take, the others chained or taken.
    expect(await r.run(first)).toMatchObject({ kind: "settled", chained: 5 });
    expect(await statuses(runIds)).toEqual(["completed", "completed", "completed"]);
    expect(r.settles?.stats).toMatchObject({ settles: 6, taken: 2 });
    // The last settle looked and found nothing due: the look is answered, so no take of the listener's follows.
    expect(demand.isOwed).toBe(false);
    expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE topic = 'step.ready' AND sent_at IS NULL")).toEqual([{ n: 0 }]);
    // Each taken step's claim is on its run's timeline, by this worker, attempt 1: a row of its own (taken), or said by
    // the settle that claimed it (chained: data.chained).
    expect(
      await rows(
        `SELECT count(*) FILTER (WHERE type = 'step.claimed' AND attempt = 1)::int AS taken, count(*) FILTER (WHERE data ? 'chained')::int AS chained
         FROM run_events WHERE run_id = ANY($1) AND worker = 'w1'`,
        [runIds],
      ),
    ).toEqual([{ taken: 3, chained: 3 }]);
  });

  it("takes nothing when no look is owed, when a queue job waits for a slot, or past the chain's bound", async () => {
    for (const setup of ["not owed", "a job waiting", "chain bound"] as const) {
      const [own, other] = await startedRuns(2);
      const slots = new Slots(1);
      const demand = new ReadyDemand(slots);
      if (setup !== "not owed") demand.notified();
      let job: Promise<void> | undefined;
      if (setup === "a job waiting") {
        await slots.acquire();
        job = slots.acquire();
      }
      const r = runner(demand, setup === "chain bound" ? 1 : 100);
      const [first] = (await r.takeReady(1)).claimed;
      if (!first || !own || !other) throw new Error("nothing taken");
      expect(await r.run(first), setup).toMatchObject({ kind: "settled", chained: 1 });
      expect(await statuses([own]), setup).toEqual(["completed"]);
      expect(await statuses([other]), setup).toEqual(["running"]);
      expect(r.settles?.stats.taken, setup).toBe(0);
      slots.release();
      await job;
    }
  });
});

describe("the run's steps a chained step starts from", () => {
  // Keys in an order jsonb does not keep, a key of two bytes in one character, a value JSON drops.
  const output = { zeta: 1, a: { yy: [{ b: 1, aa: 2 }], x: null }, "\u00e9": "e", bb: undefined, status: 200 };
  const chained = async () => {
    const { stepId } = await startAndWalk();
    const step = await stepsClaimIfLeaseFree(t.sql, stepId, "w1", 30_000, effectKinds());
    if (!step) throw new Error("no claim");
    const graph = await graphs.get(t.db, step.orgId, step.versionId);
    const own = { status: "done" as const, output, error: null };
    const advance = walkOnAfterSettle(graph, step, own, "w1", { lane: "io", leaseMs: 30_000 });
    if (!advance) throw new Error("no walk");
    return { step, own, plan: advance.rows };
  };

  it("are what a read of the table gives right after the settle, key order included", async () => {
    const { step, own, plan } = await chained();
    const stepsAfter = stepsAfterSettle(step, own, plan);
    expect(stepsAfter).not.toBeNull();
    const settled = await stepsSettleIfToken(t.sql, { step, worker: "w1", status: "done", output, advance: { runSeq: step.runSeq, rows: plan, stepsAfter } });
    expect(settled).toMatchObject({ changed: true, advanced: true });
    const read = (await rows("SELECT holdfast_run_steps($1) AS s", [step.runId]))[0]?.s;
    expect(JSON.stringify(settled.claimed?.runSteps)).toBe(JSON.stringify(read));
    expect(settled.claimed?.runSteps.map((s) => s.status)).toEqual(["done", "running"]);
  });

  it("are the worker's own when it knows them (the settle sends none back), and read when it does not", async () => {
    const known = await chained();
    const mine = [{ id: "mine", nodeId: "n", iteration: 1, status: "done" as const, output: null, error: null, advanced: true, leased: false }];
    const a = await stepsSettleIfToken(t.sql, { step: known.step, worker: "w1", status: "done", output, advance: { runSeq: known.step.runSeq, rows: known.plan, stepsAfter: mine } });
    expect(a.claimed?.runSteps).toEqual(mine);
    const unknown = await chained();
    const b = await stepsSettleIfToken(t.sql, { step: unknown.step, worker: "w1", status: "done", output, advance: { runSeq: unknown.step.runSeq, rows: unknown.plan } });
    expect(b.claimed?.runSteps.map((s) => s.status)).toEqual(["done", "running"]);
  });

  it("are left to the read when the walk inserted more than the step it claimed", () => {
    const step = { id: "s1", runSteps: [{ id: "s1", nodeId: "a", iteration: 1, status: "running", output: null, error: null, advanced: false, leased: true }] } as unknown as ClaimedStep;
    const row = { orgId: "o", runId: "r", kind: "http_request", lane: "io" as const, maxAttempts: 3, status: "running" as const, iteration: 1 };
    const plan: PlanRows = {
      steps: [{ ...row, id: "s2", nodeId: "b" }, { ...row, id: "s3", nodeId: "c", status: "ready" }],
      events: [],
      outbox: [],
      finish: null,
      advanced: [],
      claim: { stepId: "s2", nodeId: "b", iteration: 1, kind: "http_request", leaseMs: 1000, effect: true },
    };
    expect(stepsAfterSettle(step, { status: "done", output: null, error: null }, plan)).toBeNull();
    expect(stepsAfterSettle(step, { status: "done", output: null, error: null }, { ...plan, steps: plan.steps.slice(0, 1) })).toHaveLength(2);
    expect(stepsAfterSettle(step, { status: "done", output: null, error: null }, { ...plan, claim: null })).toBeNull();
  });
});

describe("cancellation whatever the step in flight does next", () => {
  it("a retry of a step whose run is being cancelled wakes the engine, which finishes the cancel", async () => {
    const { runId, orgId, stepId } = await startAndWalk();
    const claimed = await stepsClaimIfLeaseFree(t.sql, stepId, "w1", 30_000, effectKinds());
    if (!claimed) throw new Error("no claim");
    expect((await requestCancel(t.db, graphs, orgId, runId, "stop", "test")).state).toBe("requested");
    const settled = await stepsSettleIfToken(t.sql, { step: claimed, worker: "w1", status: "ready", error: { code: "http_503", message: "x" }, delayMs: 1000 });
    expect(settled.changed).toBe(true);
    expect(await rows("SELECT payload->>'reason' AS reason FROM outbox WHERE run_id = $1 AND topic = 'run.wake' ORDER BY id DESC LIMIT 1", [runId])).toEqual([
      { reason: "cancel" },
    ]);
    expect(await advanceRun(t.db, graphs, { orgId, runId, reason: "cancel" })).toMatchObject({ status: "cancelled" });
  });

  it("a run whose cancel waits on a step that was released or lost is found by the sweeper and cancelled", async () => {
    const { runId, orgId, stepId } = await startAndWalk();
    await stepsClaimIfLeaseFree(t.sql, stepId, "w1", 30_000, effectKinds());
    await requestCancel(t.db, graphs, orgId, runId, "stop", "test");
    // The worker died: its lease lapses and the sweeper reclaims the step (ready again, nobody may claim it).
    await t.sql.query("UPDATE steps SET lease_until = now() - interval '1 second' WHERE id = $1", [stepId]);
    await sweepOnce(t.db, { staleSeconds: 5, batchSize: 100, outboxRetentionSeconds: 3600 });
    await t.sql.query("UPDATE outbox SET sent_at = now()");
    await t.sql.query("UPDATE runs SET updated_at = now() - interval '10 s' WHERE id = $1", [runId]);
    expect((await sweepOnce(t.db, { staleSeconds: 5, batchSize: 100, outboxRetentionSeconds: 3600 })).runsRewoken).toBe(1);
    expect(await advanceRun(t.db, graphs, { orgId, runId, reason: "sweep" })).toMatchObject({ status: "cancelled" });
  });

  it("records a provider answer jsonb cannot store, cleaned, instead of retrying it forever", async () => {
    const { stepId } = await startAndWalk();
    const r = new StepRunner({
      db: t.db,
      graphs,
      worker: "w1",
      lane: lanes.io,
      log,
      handlers: { http_request: async () => ({ kind: "done", output: { body: "a\u0000b\ud800c" } }) },
    });
    expect((await r.run(stepId)).kind).toBe("settled");
    expect(await rows("SELECT output->>'body' AS body FROM steps WHERE id = $1", [stepId])).toEqual([{ body: "a\ufffdb\ufffdc" }]);
  });
});

// Steps, the timeline and the outbox keep no foreign key to their run: holdfast_rows_insert keeps each row a start or a
// settle writes to the run that statement holds, and a row naming another run fails the whole statement (HF005).
describe("a walk's rows are kept to the run the statement holds", () => {
  type Wrong = "steps" | "events" | "outbox" | "payload" | "claim" | null;
  /** A walk's rows: one new step, its timeline row and its wake-up, all of `run`, except the `wrong` part. */
  const rowsNaming = (run: { orgId: string; runId: string }, id: string, wrong: Wrong, other: { orgId: string; runId: string; stepId: string }): PlanRows => {
    const of = (part: Wrong) => (part === wrong ? { orgId: other.orgId, runId: other.runId } : { orgId: run.orgId, runId: run.runId });
    return {
      steps: [{ id, ...of("steps"), nodeId: "injected", kind: "http_request", lane: "io", iteration: 1, maxAttempts: 3, status: "ready" }],
      events: [{ ...of("events"), type: "step.scheduled", stepId: id, nodeId: "injected", lane: "io", worker: "w1", data: { iteration: 1 } }],
      outbox: [{ ...of("outbox"), topic: "step.ready", payload: { ...of("payload"), stepId: wrong === "payload" ? other.stepId : id, lane: "io" } }],
      finish: null,
      advanced: [],
      claim: wrong === "claim" ? { stepId: other.stepId, nodeId: "call_1", iteration: 1, kind: "http_request", leaseMs: 30_000, effect: false } : null,
    };
  };
  const claimedStep = async () => {
    const { stepId } = await startAndWalk();
    const claimed = await stepsClaimIfLeaseFree(t.sql, stepId, "w1", 30_000, effectKinds());
    if (!claimed) throw new Error("no claim");
    return claimed;
  };
  const settleWith = (step: ClaimedStep, plan: PlanRows): RunSettleRequest => ({ step, worker: "w1", status: "done", output: {}, advance: { runSeq: step.runSeq, rows: plan } });
  const unchanged = async (id: string, other: { runId: string; stepId: string }, timeline: unknown) => {
    expect(await rows("SELECT id FROM steps WHERE id = $1", [id])).toEqual([]);
    expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [other.runId])).toEqual(timeline);
    expect(await rows("SELECT id FROM outbox WHERE topic = 'step.ready' AND payload->>'stepId' IN ($1, $2) AND run_id <> $3", [id, other.stepId, other.runId])).toEqual([]);
    expect(await rows("SELECT status, owner FROM steps WHERE id = $1", [other.stepId])).toEqual([{ status: "ready", owner: null }]);
  };

  it("a settle whose walk names another run writes none of it: the step settles alone and the engine walks its run", async () => {
    const other = await startAndWalk();
    for (const wrong of ["steps", "events", "outbox", "payload", "claim"] as const) {
      const step = await claimedStep();
      const id = `stp_injected_${wrong}`;
      const timeline = await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [other.runId]);
      const settled = await stepsSettleIfToken(t.sql, settleWith(step, rowsNaming(step, id, wrong, other)));
      expect(settled, wrong).toMatchObject({ changed: true, advanced: false, walkRefused: true });
      await unchanged(id, other, timeline);
      // Its own outcome is recorded; the run goes on by the engine's walk (a run.wake), from the run it locks.
      expect(await rows("SELECT status FROM steps WHERE id = $1", [step.id])).toEqual([{ status: "done" }]);
      expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE run_id = $1 AND topic = 'run.wake'", [step.runId])).toEqual([{ n: 1 }]);
    }
    // The same rows naming the settling step's own run are written: the check refuses only another run.
    const step = await claimedStep();
    const settled = await stepsSettleIfToken(t.sql, settleWith(step, rowsNaming(step, "stp_own_run", null, other)));
    expect(settled).toMatchObject({ changed: true, advanced: true });
    expect(settled.walkRefused).toBeUndefined();
    expect(await rows("SELECT run_id, org_id FROM steps WHERE id = 'stp_own_run'")).toEqual([{ run_id: step.runId, org_id: step.orgId }]);
  });

  it("in a batch, the refused walk fails the statement, and each settle then goes alone: its neighbour's walk is written", async () => {
    const other = await startAndWalk();
    const [bad, good] = [await claimedStep(), await claimedStep()];
    const timeline = await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [other.runId]);
    const batcher = new SettleBatcher(t.sql, { max: 32, parallel: 1 });
    // The first goes alone (nothing in flight); the next two wait for it and go together in one statement.
    const first = await claimedStep();
    const results = await Promise.all([
      batcher.settle(settleWith(first, rowsNaming(first, "stp_batch_first", null, other))),
      batcher.settle(settleWith(bad, rowsNaming(bad, "stp_batch_bad", "events", other))),
      batcher.settle(settleWith(good, rowsNaming(good, "stp_batch_good", null, other))),
    ]);
    expect(results.map((r) => [r.changed, r.advanced, r.walkRefused ?? false])).toEqual([
      [true, true, false],
      [true, false, true],
      [true, true, false],
    ]);
    expect(batcher.stats).toMatchObject({ settles: 3, statements: 2, fallbacks: 1 });
    await unchanged("stp_batch_bad", other, timeline);
    expect(await rows("SELECT run_id FROM steps WHERE id = 'stp_batch_good'")).toEqual([{ run_id: good.runId }]);
  });

  it("a start whose first rows name another organisation writes no run at all", async () => {
    await startAndWalk();
    const [run] = await rows("SELECT org_id, automation_id, version_id FROM runs LIMIT 1");
    const runId = "run_start_injected";
    const plan = rowsNaming({ orgId: run.org_id, runId }, "stp_start_injected", "events", { orgId: "org_someone_else", runId, stepId: "stp_none" });
    const start = t.sql.query("SELECT holdfast_run_start($1, $2, $3, $4, 'injected-start', '{}'::jsonb, '{}'::jsonb, $5::jsonb, NULL)", [
      runId,
      run.org_id,
      run.automation_id,
      run.version_id,
      JSON.stringify(plan),
    ]);
    expect(await start.then(() => "committed", (e: { code?: string }) => e.code)).toBe("HF005");
    expect(await rows("SELECT id FROM runs WHERE id = $1", [runId])).toEqual([]);
    expect(await rows("SELECT id FROM steps WHERE run_id = $1", [runId])).toEqual([]);
  });
});
