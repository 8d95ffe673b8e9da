import { createTestDatabase, publish, replyGraph, type SmtpTarget, startSmtpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { sleep } from "../src/run/process";
import { ingestEmailReply } from "../src/people/signals/email";
import { StepRunner } from "../src/run/steps/runner";
import { fireTimer } from "../src/run/timers/fire";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * A reply that arrives at the deadline: the timer fires when it is due (by the database clock, as the sweeper would)
 * and the reply lands a few milliseconds before or after. Over the repetitions both outcomes happen, and every run
 * takes exactly one path: the winner settles the wait, the loser leaves no trace on it (a late reply is kept
 * unconsumed; a beaten timer is closed by the signal), and the run ends at the matching end node, once.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId = "";
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
const repetitions = 40;

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  orgId = (await publish(t.db, replyGraph(), { automation: "reply" })).orgId;
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

/** A run whose email went out and which now waits for the reply: its id and the Message-ID it waits on. */
async function waiting(i: number): Promise<{ runId: string; messageId: string; to: string }> {
  const to = `race${i}@example.com`;
  const runId = await startTestRun(t.db, "reply", { id: `race-${i}`, email: to });
  const [send] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  expect((await new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log }).run(send.id)).kind).toBe("settled");
  await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
  const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [send.id]);
  return { runId, messageId: output.messageId as string, to };
}

/** Fires the run's deadline as soon as the database says it is due (early attempts are refused as not due). */
async function fireWhenDue(runId: string): Promise<string> {
  const [timer] = await rows("SELECT id, wake FROM timers WHERE run_id = $1", [runId]);
  for (;;) {
    const r = await fireTimer(t.db, { orgId, runId, timerId: timer.id, wake: timer.wake, dueAt: "" }, "deadline");
    if (r.kind !== "not_due") return r.kind;
    // As long as the database says (not a 50 ms poll: forty runs polling 20 times a second held the pool's ten
    // connections, and on a loaded machine every reply waited for one past its deadline: 0 replies won in CI).
    await sleep(Math.max(1, r.inMs));
  }
}

describe("a reply arriving at the deadline", () => {
  it(`takes exactly one path per run over ${repetitions} repetitions, and both outcomes occur`, async () => {
    const runs = await Promise.all(Array.from({ length: repetitions }, (_, i) => waiting(i)));
    // Each run's deadline 600 ms + i * 15 ms from now by the database clock; its reply lands at the deadline shifted
    // by -60 .. +60 ms (the local clock and the database's are the same machine's).
    const [{ base }] = await rows("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS base");
    const startedAt = Date.now();
    const plan = runs.map((r, i) => ({ ...r, dueIn: 600 + i * 15, offset: ((i * 7) % 13) * 10 - 60 }));
    // One statement for all forty (one at a time, on a loaded machine, they took longer than the first deadlines).
    await t.sql.query(
      "UPDATE timers t SET due_at = to_timestamp(($3::float8 + p.due_in) / 1000) FROM unnest($1::text[], $2::float8[]) AS p(run_id, due_in) WHERE t.run_id = p.run_id",
      [plan.map((p) => p.runId), plan.map((p) => p.dueIn), base],
    );
    const local = Date.now() - startedAt; // the update took this long: the plan is measured from `base`
    await Promise.all(
      plan.flatMap((p) => [
        fireWhenDue(p.runId),
        sleep(Math.max(0, p.dueIn + p.offset - local)).then(() =>
          ingestEmailReply(t.db, "acme", { messageId: `<answer-${p.runId}@mail.example.com>`, from: p.to, subject: "Re: Hi", inReplyTo: p.messageId, text: "Yes" }),
        ),
      ]),
    );
    const outcomes = { reply: 0, timeout: 0 };
    for (const p of plan) {
      const walked = await advanceRun(t.db, graphs, { orgId, runId: p.runId, reason: "signal" });
      expect(walked.status).toBe("completed");
      const [wait] = await rows("SELECT id, status, output->>'outcome' AS outcome FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [p.runId]);
      const [timer] = await rows("SELECT fired_by FROM timers WHERE step_id = $1", [wait.id]);
      const [signal] = await rows("SELECT consumed_at IS NOT NULL AS consumed FROM signals WHERE identity = $1", [`<answer-${p.runId}@mail.example.com>`]);
      const ends = await rows("SELECT node_id FROM run_events WHERE run_id = $1 AND type = 'run.completed'", [p.runId]);
      const consumedEvents = await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'signal.consumed'", [p.runId]);
      expect(wait.status).toBe("done");
      if (wait.outcome === "reply") {
        outcomes.reply++;
        expect({ timer: timer.fired_by, consumed: signal.consumed, ends, consumedEvents }).toEqual({ timer: "signal", consumed: true, ends: [{ node_id: "replied" }], consumedEvents: [{ n: 1 }] });
      } else {
        outcomes.timeout++;
        expect(wait.outcome).toBe("timeout");
        expect({ timer: timer.fired_by, consumed: signal.consumed, ends, consumedEvents }).toEqual({ timer: "deadline", consumed: false, ends: [{ node_id: "silent" }], consumedEvents: [{ n: 0 }] });
      }
    }
    console.log(`reply at the deadline, ${repetitions} runs: ${outcomes.reply} replies won, ${outcomes.timeout} deadlines won, never both`);
    expect(outcomes.reply).toBeGreaterThan(0);
    expect(outcomes.timeout).toBeGreaterThan(0);
    expect(outcomes.reply + outcomes.timeout).toBe(repetitions);
  });
});
