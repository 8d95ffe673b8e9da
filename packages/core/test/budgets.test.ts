import { createTestDatabase, type HttpTarget, publish, startHttpTarget, type TestDatabase, startTestRun } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { StepRunner } from "../src/run/steps/runner";
import { sweepOnce } from "../src/run/sweeper/sweep";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Run budgets: a loop without a wait stops at its step budget (on the engine's walk and on a worker's own walk with
 * local dispatch alike); a run older than its age budget stops, even while it waits, with its wait closed.
 */
let t: TestDatabase;
let target: HttpTarget;
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  // call -> again? (true: back to call) -> end: a loop with a step in it and no wait.
  await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "call", kind: "http_request", config: { url: target.url } },
        { id: "again", kind: "branch", config: { condition: { path: "input.loop", op: "truthy" } } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "call" },
        { from: "call", to: "again" },
        { from: "again", to: "call", label: "true" },
        { from: "again", to: "e", label: "false" },
      ],
    }),
    { automation: "loop" },
  );
  await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "nap", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 } } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "nap" },
        { from: "nap", to: "e" },
      ],
    }),
    { automation: "sleepy" },
  );
  await q("UPDATE automations SET run_max_steps = 5 WHERE slug = 'loop'");
  await q("UPDATE automations SET run_max_age_seconds = 1 WHERE slug = 'sleepy'");
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

const start = async (automation: string, input: Record<string, unknown>) => {
  const runId = await startTestRun(t.db, automation, { id: `e${++n}`, ...input });
  return runId;
};

describe("run budgets", () => {
  it("a run gets its automation's budgets, else its organisation's", async () => {
    const loop = await start("loop", { loop: false });
    const sleepy = await start("sleepy", {});
    expect(await q("SELECT max_steps, expires_at > created_at AS has_age FROM runs WHERE id = ANY($1) ORDER BY id = $2 DESC", [[loop, sleepy], loop])).toEqual([
      { max_steps: 5, has_age: true },
      { max_steps: 1000, has_age: true },
    ]);
  });

  it.each([
    ["a worker's own walk (local dispatch)", true],
    ["the engine's walk", false],
  ])("a loop without a wait stops at its step budget: %s", async (_what, local) => {
    const runId = await start("loop", { loop: true });
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log, ...(local ? { localDispatch: { maxChain: 100 } } : {}) });
    for (let i = 0; i < 20; i++) {
      const [ready] = await q("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId]);
      if (ready) await runner.run(ready.id);
      const [run] = await q("SELECT org_id, status FROM runs WHERE id = $1", [runId]);
      if (run.status !== "running") break;
      await advanceRun(t.db, graphs, { orgId: run.org_id, runId, reason: "step_settled" });
    }
    expect(await q("SELECT status, error FROM runs WHERE id = $1", [runId])).toEqual([
      { status: "failed", error: { reason: "step budget: 5 steps executed, the limit is 5", nodeId: "call", budget: "steps" } },
    ]);
    expect(await q("SELECT count(*)::int AS n FROM steps WHERE run_id = $1", [runId])).toEqual([{ n: 5 }]);
    expect(await q("SELECT data->>'budget' AS budget FROM run_events WHERE run_id = $1 AND type = 'run.failed'", [runId])).toEqual([{ budget: "steps" }]);
  });

  it("a step of a run past its age budget is not claimed: nothing is performed after the limit", async () => {
    const runId = await start("loop", { loop: false });
    await q("UPDATE runs SET expires_at = now() - interval '1 second' WHERE id = $1", [runId]);
    const [step] = await q("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId]);
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });
    expect((await runner.run(step.id)).kind).toBe("not_claimable");
    expect(target.calls.get(`${runId}/call/1`)).toBeUndefined();
    const [run] = await q("SELECT org_id FROM runs WHERE id = $1", [runId]);
    await advanceRun(t.db, graphs, { orgId: run.org_id, runId, reason: "sweep" });
    expect(await q("SELECT r.status, s.status AS step FROM runs r JOIN steps s ON s.run_id = r.id WHERE r.id = $1", [runId])).toEqual([
      { status: "failed", step: "cancelled" },
    ]);
  });

  it("a run older than its age budget stops while it waits: the wait and its timer close, the reason is on the run", async () => {
    const runId = await start("sleepy", {});
    expect(await q("SELECT status FROM steps WHERE run_id = $1", [runId])).toEqual([{ status: "waiting" }]);
    await new Promise((r) => setTimeout(r, 1_100));
    const swept = await sweepOnce(t.db, { staleSeconds: 30, batchSize: 100, outboxRetentionSeconds: 3600 });
    expect(swept.runsExpired).toBeGreaterThanOrEqual(1);
    const [run] = await q("SELECT org_id FROM runs WHERE id = $1", [runId]);
    await advanceRun(t.db, graphs, { orgId: run.org_id, runId, reason: "sweep" });
    expect(await q("SELECT status, error->>'reason' AS reason FROM runs WHERE id = $1", [runId])).toEqual([
      { status: "failed", reason: "age budget: the run is older than its limit" },
    ]);
    expect(await q("SELECT status FROM steps WHERE run_id = $1", [runId])).toEqual([{ status: "cancelled" }]);
    expect(await q("SELECT fired_by FROM timers WHERE run_id = $1", [runId])).toEqual([{ fired_by: "cancelled" }]);
  });
});
