import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceMany, advanceRun } from "../src/run/engine/advance";
import { timersFireDueFairly, timersFireIfDue } from "../src/store/sql/timers";
import { startRun } from "../src/run/start/start-run";
import { type Graph, parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

// The due sweep walks the runs it fires in its own transaction (advanceMany, applyPlans): every run must end up
// exactly as the engine's walk of that run alone (advanceRun) leaves it, whatever its plan.

const trigger = { id: "t", kind: "trigger", config: { eventIdField: "id" } } as const;
const hour = (id: string) => ({ id, kind: "wait", config: { rule: { kind: "duration", seconds: 3600 }, spreadSeconds: 0 } });
const graphs: Record<string, Graph> = {
  // the wait settles, the run ends
  "wait-end": parseGraph({ nodes: [trigger, hour("w"), { id: "e", kind: "end" }], edges: [{ from: "t", to: "w" }, { from: "w", to: "e" }] }),
  // a plain step follows: its row, step.scheduled and its step.ready wake-up
  "wait-call": parseGraph({
    nodes: [trigger, hour("w"), { id: "call", kind: "http_request", config: { url: "http://127.0.0.1:9/unused", method: "POST" } }, { id: "e", kind: "end" }],
    edges: [{ from: "t", to: "w" }, { from: "w", to: "call" }, { from: "call", to: "e" }],
  }),
  // another wait follows: its timer, from the database clock
  "wait-wait": parseGraph({ nodes: [trigger, hour("w"), hour("w2"), { id: "e", kind: "end" }], edges: [{ from: "t", to: "w" }, { from: "w", to: "w2" }, { from: "w2", to: "e" }] }),
  // a branch on the input, then the end
  "wait-branch": parseGraph({
    nodes: [trigger, hour("w"), { id: "b", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } }, { id: "yes", kind: "end" }, { id: "no", kind: "end" }],
    edges: [{ from: "t", to: "w" }, { from: "w", to: "b" }, { from: "b", to: "yes", label: "true" }, { from: "b", to: "no", label: "false" }],
  }),
};

let t: TestDatabase;
let orgId = "";
let n = 0;
beforeAll(async () => {
  t = await createTestDatabase();
  for (const [slug, graph] of Object.entries(graphs)) orgId = (await publish(t.db, graph, { automation: slug })).orgId;
});
afterAll(() => t?.drop());

const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

async function start(automation: string): Promise<string> {
  const body = { id: `evt_${++n}`, plan: n % 2 ? "pro" : "free" };
  const headers = { "webhook-id": body.id, "webhook-timestamp": null, "webhook-signature": null };
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: automation, rawBody: JSON.stringify(body), body, headers, via: "test", auth: { kind: "operator" } });
  await advanceRun(t.db, new GraphCache(), { orgId, runId, reason: "started" });
  return runId;
}

/** What a run looks like, ids left out: its status, steps, timers, unsent wake-ups and timeline in order. */
async function shape(runId: string) {
  return {
    run: await rows("SELECT status, seq FROM runs WHERE id = $1", [runId]),
    steps: await rows("SELECT node_id, iteration, status, advanced_at IS NOT NULL AS advanced FROM steps WHERE run_id = $1 ORDER BY created_at, node_id", [runId]),
    timers: await rows("SELECT fired_at IS NOT NULL AS fired, fired_by FROM timers WHERE run_id = $1 ORDER BY created_at", [runId]),
    outbox: await rows("SELECT topic, payload->>'reason' AS reason FROM outbox WHERE run_id = $1 AND sent_at IS NULL ORDER BY id", [runId]),
    timeline: (await rows("SELECT type, node_id, worker FROM run_events WHERE run_id = $1 ORDER BY id", [runId])).map((e) => `${e.type}:${e.node_id ?? ""}:${e.worker ?? ""}`),
  };
}

describe("walking the runs the due sweep fires, together", () => {
  it("leaves every run as the engine's walk of it alone does: an end, a plain step, another wait, a branch", async () => {
    const kinds = Object.keys(graphs);
    const together: string[] = [];
    const alone: string[] = [];
    for (const k of kinds) for (let i = 0; i < 2; i++) together.push(await start(k));
    for (const k of kinds) for (let i = 0; i < 2; i++) alone.push(await start(k));
    await rows("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");

    // Together: one transaction fires every due timer and walks every run.
    await rows("UPDATE timers SET due_at = now() - interval '1 minute' WHERE run_id = ANY($1)", [together]);
    const results = await inTx(t.db, async (tx) => {
      const batch = await timersFireDueFairly(tx, 20, 50, 500, "sweeper", true);
      expect(batch.runs.map((r) => r.runId).sort()).toEqual([...together].sort());
      return advanceMany(tx, new GraphCache(), batch.runs, "sweeper");
    });
    expect(results).toHaveLength(together.length);

    // Alone: each timer fired, then its run walked, as the engine's fast path does (two transactions).
    await rows("UPDATE timers SET due_at = now() - interval '1 minute' WHERE run_id = ANY($1)", [alone]);
    for (const runId of alone) {
      const [timer] = await rows("SELECT id FROM timers WHERE run_id = $1 AND fired_at IS NULL", [runId]);
      await inTx(t.db, (tx) => timersFireIfDue(tx, timer?.id, null, "sweeper"));
      await rows("UPDATE outbox SET sent_at = now() WHERE run_id = $1 AND topic = 'run.wake'", [runId]);
      await advanceRun(t.db, new GraphCache(), { orgId, runId, reason: "timer_fired" }, "sweeper");
    }

    for (let i = 0; i < together.length; i++) {
      const a = await shape(together[i] as string);
      const b = await shape(alone[i] as string);
      expect(a, kinds[Math.floor(i / 2)]).toEqual(b);
    }
    // What each kind came to (so equal does not mean equally nothing).
    const ends = await rows("SELECT a.slug, r.status, count(*)::int AS n FROM runs r JOIN automations a ON a.id = r.automation_id GROUP BY 1, 2 ORDER BY 1, 2");
    expect(ends).toEqual([
      { slug: "wait-branch", status: "completed", n: 4 },
      { slug: "wait-call", status: "running", n: 4 },
      { slug: "wait-end", status: "completed", n: 4 },
      { slug: "wait-wait", status: "running", n: 4 },
    ]);
    expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE run_id = ANY($1) AND topic = 'step.ready' AND sent_at IS NULL", [together])).toEqual([{ n: 2 }]);
    expect(await rows("SELECT count(*)::int AS n FROM timers WHERE run_id = ANY($1) AND fired_at IS NULL", [together])).toEqual([{ n: 2 }]);
  });

  it("does not wait for a run another transaction holds: the engine gets a run.wake for it instead", async () => {
    const held = await start("wait-end");
    const free = await start("wait-end");
    await rows("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");
    await rows("UPDATE timers SET due_at = now() - interval '1 minute' WHERE run_id = ANY($1)", [[held, free]]);
    // A person deciding an approval holds its run (FOR NO KEY UPDATE), then waits for the timer the sweep fired.
    const other = await t.sql.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT id FROM runs WHERE id = $1 FOR NO KEY UPDATE", [held]);
      const results = await inTx(t.db, async (tx) => {
        const batch = await timersFireDueFairly(tx, 20, 50, 500, "sweeper", true);
        return advanceMany(tx, new GraphCache(), batch.runs, "sweeper");
      });
      expect(results).toHaveLength(2);
      await other.query("COMMIT");
    } finally {
      other.release();
    }
    expect(await rows("SELECT id, status FROM runs WHERE id = ANY($1) ORDER BY id = $2", [[held, free], held])).toEqual([
      { id: free, status: "completed" },
      { id: held, status: "running" },
    ]);
    expect(await rows("SELECT run_id, payload->>'reason' AS reason FROM outbox WHERE run_id = ANY($1) AND topic = 'run.wake' AND sent_at IS NULL", [[held, free]])).toEqual([
      { run_id: held, reason: "timer_fired" },
    ]);
    // The engine's walk then takes it on.
    expect(await advanceRun(t.db, new GraphCache(), { orgId, runId: held, reason: "timer_fired" }, "engine")).toMatchObject({ status: "completed" });
  });

  it("leaves a run that is no longer running as it is", async () => {
    const runId = await start("wait-end");
    await rows("UPDATE runs SET status = 'cancelled', finished_at = now() WHERE id = $1", [runId]);
    const before = await shape(runId);
    const results = await inTx(t.db, (tx) => advanceMany(tx, new GraphCache(), [{ orgId, runId }], "sweeper"));
    expect(results).toEqual([{ runId, commands: [], status: "cancelled" }]);
    expect(await shape(runId)).toEqual(before);
  });
});
