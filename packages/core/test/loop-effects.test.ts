import { createTestDatabase, type HttpTarget, publish, startHttpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * A loop's second visit of an effect step is a new effect: the provider is called again, with a new key
 * (run/node/iteration), and does the work again; a key reused across iterations would replay the first answer.
 */
let t: TestDatabase;
let target: HttpTarget;
let orgId = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  const graph = parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "call", kind: "http_request", config: { url: target.url } },
      // Again while the latest call's answer names the first iteration's key: the answer to a repeated key would.
      { id: "again", kind: "branch", config: { condition: { path: "steps.call.output.body.key", op: "contains", value: "/call/1" } } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "call" },
      { from: "call", to: "again" },
      { from: "again", to: "call", label: "true" },
      { from: "again", to: "e", label: "false" },
    ],
  });
  orgId = (await publish(t.db, graph, { automation: "loop" })).orgId;
});
afterAll(async () => {
  await target?.close();
  await t?.drop();
});

/** Walks the run and runs its ready steps in this process until it finishes (at most `rounds` rounds). */
async function drive(runId: string, rounds = 10): Promise<string> {
  const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });
  for (let i = 0; i < rounds; i++) {
    await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
    const [run] = await rows("SELECT status FROM runs WHERE id = $1", [runId]);
    if (run.status !== "running") return run.status;
    for (const s of await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId])) await runner.run(s.id);
  }
  return "still running";
}

describe("a loop's second iteration", () => {
  it("calls the provider again with a new effect key, and each iteration's effect is its own", async () => {
    const runId = await startTestRun(t.db, "loop", { id: "loop-1" });
    expect(await drive(runId)).toBe("completed");
    const keys = [`${runId}/call/1`, `${runId}/call/2`];
    // The provider saw both keys, each once: two calls, two effects.
    expect(keys.map((k) => target.calls.get(k))).toEqual([1, 1]);
    expect([...target.calls.keys()].filter((k) => k.startsWith(runId))).toEqual(keys);
    const effects = await rows("SELECT key, status, result->'body'->>'key' AS answered FROM effects WHERE run_id = $1 ORDER BY key", [runId]);
    expect(effects).toEqual(keys.map((key) => ({ key, status: "settled", answered: key })));
    const steps = await rows("SELECT iteration, status FROM steps WHERE run_id = $1 AND node_id = 'call' ORDER BY iteration", [runId]);
    expect(steps).toEqual([
      { iteration: 1, status: "done" },
      { iteration: 2, status: "done" },
    ]);
  });
});
