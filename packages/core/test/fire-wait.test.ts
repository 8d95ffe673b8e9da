import { createTestDatabase, type HttpTarget, publish, replyGraph, type SmtpTarget, startHttpTarget, startSmtpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { requestCancel } from "../src/run/runs/cancel";
import { fireWaitNow } from "../src/run/runs/fire-wait";
import { fireWaitConfirmation, fireWaitWords } from "../src/run/runs/fire-wait-words";
import { timersFireDueFairly } from "../src/store/sql/timers";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * "Fire this wait now" (issue 40): a person ends a real run's wait early, through the sweeper's firing statement. A
 * hundred concurrent clicks fire it once; the timeline and the automation's history say who and why; the next step
 * (an HTTP call) runs once through the effect ledger.
 */
let t: TestDatabase;
let target: HttpTarget;
let smtp: SmtpTarget;
let orgId = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
const by = "user:olive@acme.test";

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  const graph = parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "nap", kind: "wait", name: "A day's pause", config: { rule: { kind: "duration", seconds: 86_400 } } },
      { id: "call", kind: "http_request", name: "Tell the CRM", config: { url: target.url } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "nap" },
      { from: "nap", to: "call" },
      { from: "call", to: "e" },
    ],
  });
  orgId = (await publish(t.db, graph, { automation: "napper" })).orgId;
  smtp = await startSmtpTarget();
  await publish(t.db, replyGraph(), { automation: "reply" });
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
});
afterAll(async () => {
  await target?.close();
  await smtp?.close();
  await t?.drop();
});

async function waitingRun(id: string): Promise<string> {
  const runId = await startTestRun(t.db, "napper", { id });
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  expect(await rows("SELECT node_id, status FROM steps WHERE run_id = $1", [runId])).toEqual([{ node_id: "nap", status: "waiting" }]);
  return runId;
}

describe("fire this wait now", () => {
  it("a hundred concurrent clicks fire it once; the others read back who and why; the next step calls out once", async () => {
    const runId = await waitingRun("r-1");
    const [timer] = await rows("SELECT id, due_at FROM timers WHERE run_id = $1", [runId]);
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, () => fireWaitNow(t.db, graphs, { orgId, runId, nodeId: "nap", by, reason: "the customer asked to go ahead" })),
    );
    const fired = outcomes.filter((o) => o.kind === "fired");
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ nodeId: "nap", status: "running", dueAt: timer.due_at });
    const again = outcomes.filter((o) => o.kind === "already_fired");
    expect(again).toHaveLength(99);
    for (const o of again) expect(o).toMatchObject({ how: "early", firedBy: by, reason: "the customer asked to go ahead", firedAt: fired[0]?.firedAt });
    expect(fireWaitWords(again[0] as Parameters<typeof fireWaitWords>[0])).toMatch(
      /^Already fired at .* UTC by olive@acme\.test: "the customer asked to go ahead" \(it was due .* UTC\)\. Nothing was done again\.$/,
    );

    // The sweeper's firing statement did it: the step settled with its due instant, one timer.fired naming who and why.
    const [t2] = await rows("SELECT fired_by, fired_at < due_at AS early, lateness_ms FROM timers WHERE run_id = $1", [runId]);
    expect(t2).toEqual({ fired_by: by, early: true, lateness_ms: 0 });
    const events = await rows("SELECT worker, data FROM run_events WHERE run_id = $1 AND type = 'timer.fired'", [runId]);
    expect(events).toHaveLength(1);
    expect(events[0].worker).toBe(by);
    expect(events[0].data).toMatchObject({ timerId: timer.id, early: true, reason: "the customer asked to go ahead" });
    expect(new Date(events[0].data.dueAt).getTime()).toBe(timer.due_at.getTime());
    const history = await rows("SELECT action, by, reason, detail FROM automation_history WHERE detail->>'runId' = $1", [runId]);
    expect(history).toEqual([
      { action: "fire_wait", by, reason: "the customer asked to go ahead", detail: { runId, stepId: fired[0]?.stepId, nodeId: "nap", dueAt: timer.due_at.toISOString() } },
    ]);

    // The walk ran in the firing's transaction: the HTTP step is ready; a lane worker performs it once, through the ledger.
    const [call] = await rows("SELECT id, status FROM steps WHERE run_id = $1 AND node_id = 'call'", [runId]);
    expect(call.status).toBe("ready");
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });
    await runner.run(call.id);
    await runner.run(call.id); // a duplicate wake-up finds it done
    expect(target.calls.get(`${runId}/call/1`)).toBe(1);
    expect(await rows("SELECT status FROM effects WHERE run_id = $1", [runId])).toEqual([{ status: "settled" }]);
    await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
    expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);

    // Later clicks still read back what happened, and the sweeper finds nothing to fire.
    const late = await fireWaitNow(t.db, graphs, { orgId, runId, by: "user:sam@acme.test", reason: "again" });
    expect(late).toMatchObject({ kind: "already_fired", firedBy: by, how: "early" });
    await t.sql.query("UPDATE timers SET due_at = now() - interval '1 minute' WHERE run_id = $1", [runId]);
    const sweep = await inTx(t.db, (tx) => timersFireDueFairly(tx, 10, 10, 10, "sweeper"));
    expect(sweep.runs.filter((r) => r.runId === runId)).toEqual([]);
  });

  it("says what happens before the person confirms", async () => {
    const [{ graph }] = await rows("SELECT v.graph FROM automation_versions v JOIN automations a ON a.id = v.automation_id WHERE a.slug = 'napper'");
    expect(fireWaitConfirmation(graph, "nap")).toBe('The run continues now as if the wait had ended: the next step, "Tell the CRM", runs at once.');
  });

  it("refuses in words: no reason, not a wait, a finished run, a run of another organisation", async () => {
    const runId = await waitingRun("r-2");
    await expect(fireWaitNow(t.db, graphs, { orgId, runId, by, reason: "  " })).rejects.toThrow("a reason is required");
    await expect(fireWaitNow(t.db, graphs, { orgId, runId, nodeId: "call", by, reason: "go" })).rejects.toThrow('this run has no step "call"');
    await expect(fireWaitNow(t.db, graphs, { orgId: "org_00000000000000000000000000000000", runId, by, reason: "go" })).rejects.toThrow("not found");
    await requestCancel(t.db, graphs, orgId, runId, "no longer needed", by);
    await expect(fireWaitNow(t.db, graphs, { orgId, runId, by, reason: "go" })).rejects.toThrow('the wait at "nap" was closed when the run stopped');

    const done = await waitingRun("r-3");
    await fireWaitNow(t.db, graphs, { orgId, runId: done, by, reason: "go" });
    const [call] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'call'", [done]);
    await expect(fireWaitNow(t.db, graphs, { orgId, runId: done, nodeId: "call", by, reason: "go" })).rejects.toThrow(
      '"call" is a HTTP request step, not a wait: only a Wait or a Wait for reply can be fired now',
    );
    await new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log }).run(call.id);
    await advanceRun(t.db, graphs, { orgId, runId: done, reason: "step_settled" });
    // Finished: a click reads back the firing, it does not refuse it.
    expect(await fireWaitNow(t.db, graphs, { orgId, runId: done, by, reason: "go" })).toMatchObject({ kind: "already_fired", how: "early" });
  });

  it("a reply wait fired now gives up on the reply and takes its timeout path, as its deadline would", async () => {
    const runId = await startTestRun(t.db, "reply", { id: "reply-1", email: "maya@example.com" });
    const [send] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    expect((await new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log }).run(send.id)).kind).toBe("settled");
    await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
    const [{ graph }] = await rows("SELECT v.graph FROM automation_versions v JOIN automations a ON a.id = v.automation_id WHERE a.slug = 'reply'");
    expect(fireWaitConfirmation(graph, "await_reply")).toBe(
      "The run stops waiting for the reply and takes its timeout path now, as if no reply had come in time: the run ends at once.",
    );
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => fireWaitNow(t.db, graphs, { orgId, runId, by, reason: "she called instead" })));
    expect(outcomes.filter((o) => o.kind === "fired")).toHaveLength(1);
    expect(await rows("SELECT node_id, status, output->>'outcome' AS outcome FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId])).toEqual([
      { node_id: "await_reply", status: "done", outcome: "timeout" },
    ]);
    const path = await rows("SELECT node_id FROM steps WHERE run_id = $1 ORDER BY created_at", [runId]);
    expect(path.map((r) => r.node_id)).not.toContain("replied");
    expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
  });
});
