import { createTestDatabase, type HttpTarget, publish, type SmtpTarget, startHttpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { advanceRun } from "../src/run/engine/advance";
import { InvalidGraphError } from "../src/base/errors";
import { createLogger } from "../src/base/log";
import { ingestEmailReply, senderAddress } from "../src/people/signals/email";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { fireTimer } from "../src/run/timers/fire";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let smtp: SmtpTarget;
let http: HttpTarget;
let orgId = "";
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const replyGraph = (replyTo = "send") =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "send", kind: "send_email", config: { connection: "mail", subject: "Quick question", text: "Can we talk?" } },
      { id: "await_reply", kind: "wait_for_reply", config: { replyTo, timeoutSeconds: 3600 } },
      { id: "thank", kind: "http_request", config: { url: "http://127.0.0.1:9/replaced" } },
      { id: "done", kind: "end" },
      { id: "gave_up", kind: "end" },
    ],
    edges: [
      { from: "t", to: "send" },
      { from: "send", to: "await_reply" },
      { from: "await_reply", to: "thank", label: "reply" },
      { from: "await_reply", to: "gave_up", label: "timeout" },
      { from: "thank", to: "done" },
    ],
  });

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  http = await startHttpTarget();
  const graph = replyGraph();
  const thank = graph.nodes.find((x) => x.id === "thank");
  if (thank?.kind === "http_request") thank.config.url = http.url;
  orgId = (await publish(t.db, graph, { automation: "reply" })).orgId;
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
});
afterAll(async () => {
  await Promise.all([smtp?.close(), http?.close()]);
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });

/** A run whose email went out: returns the Message-ID it was sent with. */
async function sent(): Promise<{ runId: string; messageId: string }> {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "reply",
    rawBody: "{}",
    body: { id: `s${++n}`, email: `maya${n}@example.com` },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  expect((await runner().run(id)).kind).toBe("settled");
  const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [id]);
  recipients.set(output.messageId, output.to);
  return { runId, messageId: output.messageId as string };
}
/** Whom each sent Message-ID went to: a reply in these tests comes from that person unless a test says otherwise. */
const recipients = new Map<string, string>();
const walk = (runId: string) => advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
const reply = (messageId: string, inReplyTo: string, extra: Record<string, unknown> = {}) =>
  ingestEmailReply(t.db, "acme", { messageId, from: recipients.get(inReplyTo) ?? "maya@example.com", subject: "Re: Quick question", inReplyTo, text: "Yes, Tuesday works.", ...extra });
const waitStep = async (runId: string) => (await rows("SELECT id, status, output FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [runId]))[0];

describe("wait_for_reply and email signals", () => {
  it("refuses a reply wait without both edges or pointed at something that is not an email, at publish", () => {
    expect(() => replyGraph("thank")).toThrow(InvalidGraphError);
  });

  it("a reply to the sent email settles the waiting step, closes its deadline, and the run goes on along 'reply'", async () => {
    const { runId, messageId } = await sent();
    await walk(runId);
    expect((await waitStep(runId)).status).toBe("waiting");
    expect(await reply(`<r1-${runId}@mail.example.com>`, messageId)).toMatchObject({ duplicate: false, consumed: true, runId });
    const step = await waitStep(runId);
    expect(step).toMatchObject({ status: "done", output: { outcome: "reply", reply: { text: "Yes, Tuesday works." } } });
    expect(await rows("SELECT fired_by FROM timers WHERE step_id = $1", [step.id])).toEqual([{ fired_by: "signal" }]);
    await walk(runId);
    expect(await rows("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'thank'", [runId])).toEqual([{ status: "ready" }]);
  });

  it("a reply that arrives before the run reaches the wait is kept and consumed when it gets there", async () => {
    const { runId, messageId } = await sent();
    expect(await reply(`<early-${runId}@mail.example.com>`, messageId)).toMatchObject({ consumed: false });
    expect(await rows("SELECT consumed_at FROM signals WHERE identity = $1", [`<early-${runId}@mail.example.com>`])).toEqual([{ consumed_at: null }]);
    await walk(runId); // reaches the wait: the stored reply is consumed in the same transaction
    expect(await waitStep(runId)).toMatchObject({ status: "done", output: { outcome: "reply" } });
    await walk(runId);
    expect(await rows("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'thank'", [runId])).toEqual([{ status: "ready" }]);
  });

  it("a reply delivered three times is stored once and advances the run once", async () => {
    const { runId, messageId } = await sent();
    await walk(runId);
    const id = `<thrice-${runId}@mail.example.com>`;
    const outcomes = await Promise.all([reply(id, messageId), reply(id, messageId), reply(id, messageId)]);
    expect(outcomes.filter((o) => o.consumed)).toHaveLength(1);
    expect(outcomes.filter((o) => o.duplicate)).toHaveLength(2);
    expect(await rows("SELECT count(*)::int AS n FROM signals WHERE identity = $1", [id])).toEqual([{ n: 1 }]);
    expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'signal.consumed'", [runId])).toEqual([{ n: 1 }]);
  });

  it("the deadline and a reply race: exactly one wins, 20 times over", async () => {
    const runs = await Promise.all(Array.from({ length: 20 }, () => sent()));
    for (const r of runs) await walk(r.runId);
    await t.sql.query("UPDATE timers SET due_at = now() - interval '1 second' WHERE run_id = ANY($1)", [runs.map((r) => r.runId)]);
    const timers = await rows("SELECT id, run_id, wake FROM timers WHERE run_id = ANY($1)", [runs.map((r) => r.runId)]);
    await Promise.all(
      runs.flatMap((r, i) => {
        const timer = timers.find((x) => x.run_id === r.runId);
        const fire = () => fireTimer(t.db, { orgId, runId: timer.run_id, timerId: timer.id, wake: timer.wake, dueAt: "" }, "test");
        const answer = () => reply(`<race-${r.runId}@mail.example.com>`, r.messageId);
        const later = <T>(f: () => Promise<T>) => new Promise<T>((res) => setTimeout(() => res(f()), (i * 3) % 25));
        return i % 2 ? [fire(), answer()] : [answer(), later(fire)];
      }),
    );
    let replies = 0;
    for (const r of runs) {
      const step = await waitStep(r.runId);
      expect(step.status).toBe("done");
      const [signal] = await rows("SELECT consumed_at FROM signals WHERE identity = $1", [`<race-${r.runId}@mail.example.com>`]);
      if (step.output.outcome === "reply") {
        replies++;
        expect(signal.consumed_at).not.toBeNull();
      } else {
        expect(step.output).toHaveProperty("firedAt"); // the timer settled it; the reply is kept, unconsumed
        expect(signal.consumed_at).toBeNull();
      }
    }
    console.log(`reply vs deadline, 20 races: ${replies} replies won, ${20 - replies} deadlines won, never both`);
  });

  it("after the deadline the run goes on along 'timeout'; a reply with no waiting step is stored as unmatched", async () => {
    const { runId, messageId } = await sent();
    await walk(runId);
    await t.sql.query("UPDATE timers SET due_at = now() - interval '1 second' WHERE run_id = $1", [runId]);
    const [timer] = await rows("SELECT id, run_id, wake FROM timers WHERE run_id = $1", [runId]);
    expect(await fireTimer(t.db, { orgId, runId: timer.run_id, timerId: timer.id, wake: timer.wake, dueAt: "" }, "test")).toMatchObject({ kind: "fired" });
    expect(await walk(runId)).toMatchObject({ status: "completed" });
    expect(await rows("SELECT type, node_id FROM run_events WHERE run_id = $1 AND type = 'run.completed'", [runId])).toEqual([{ type: "run.completed", node_id: "gave_up" }]);
    expect(await reply(`<late-${runId}@mail.example.com>`, messageId)).toMatchObject({ consumed: false, duplicate: false });
    expect(await reply(`<stranger@mail.example.com>`, "<unknown@nowhere>")).toMatchObject({ consumed: false, duplicate: false });
    expect(await rows("SELECT count(*)::int AS n FROM signals WHERE consumed_at IS NULL AND identity IN ($1, '<stranger@mail.example.com>')", [`<late-${runId}@mail.example.com>`])).toEqual([{ n: 2 }]);
  });
});

describe("a reply is believed only from the recipient of the email it answers", () => {
  const forged = (id: string, messageId: string) => reply(id, messageId, { from: "Maya <sam@evil.test>", text: "Stop everything." });
  const signal = async (identity: string) =>
    (await rows("SELECT consumed_at, step_id, run_id, sender, unmatched_reason FROM signals WHERE identity = $1", [identity]))[0];

  it("reads the one address of a From header, lower-cased, whatever its display name says", () => {
    expect(senderAddress('"Maya" <MAYA@Example.com>')).toBe("maya@example.com");
    expect(senderAddress("Maya Lind <maya@example.com> (work)")).toBe("maya@example.com");
    expect(senderAddress("  Maya@Example.COM ")).toBe("maya@example.com");
    expect(senderAddress('"maya@example.com" <sam@evil.test>')).toBe("sam@evil.test");
    expect(senderAddress("maya@example.com, sam@evil.test")).toBeNull();
    expect(senderAddress("Maya")).toBeNull();
  });

  it("a forged reply (right In-Reply-To, another sender) is stored with the reason and the run keeps waiting; the contact's reply moves it", async () => {
    const { runId, messageId } = await sent();
    const maya = recipients.get(messageId) as string;
    await walk(runId);
    const reason = `sender sam@evil.test is not the recipient ${maya} of the message it replies to`;
    expect(await forged(`<forged-${runId}@evil.test>`, messageId)).toMatchObject({ duplicate: false, consumed: false, runId: null, unmatchedReason: reason });
    expect(await waitStep(runId)).toMatchObject({ status: "waiting" });
    expect(await signal(`<forged-${runId}@evil.test>`)).toEqual({ consumed_at: null, step_id: null, run_id: runId, sender: "sam@evil.test", unmatched_reason: reason });
    expect(await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'signal.refused'", [runId])).toEqual([
      { data: { signalId: expect.stringMatching(/^sig_/), inReplyTo: messageId, reason } },
    ]);

    // Case and display name do not matter: this is the recipient.
    const genuine = `<genuine-${runId}@mail.example.com>`;
    const from = `"Maya" <${maya.toUpperCase().replace("EXAMPLE.COM", "Example.com")}>`;
    expect(await reply(genuine, messageId, { from })).toMatchObject({ consumed: true, runId, unmatchedReason: null });
    const step = await waitStep(runId);
    expect(step).toMatchObject({ status: "done", output: { outcome: "reply", reply: { messageId: genuine, from } } });
    expect(await signal(`<forged-${runId}@evil.test>`)).toMatchObject({ consumed_at: null, step_id: null });
    expect(await signal(genuine)).toMatchObject({ step_id: step.id, sender: maya, unmatched_reason: null });
  });

  it("a forged reply that arrives before the run reaches its wait is not consumed when it gets there", async () => {
    const { runId, messageId } = await sent();
    expect((await forged(`<early-forged-${runId}@evil.test>`, messageId)).unmatchedReason).toMatch(/^sender sam@evil\.test is not the recipient/);
    await walk(runId); // reaches the wait: the stored forged reply is not consumed
    expect(await waitStep(runId)).toMatchObject({ status: "waiting" });
    expect(await signal(`<early-forged-${runId}@evil.test>`)).toMatchObject({ consumed_at: null, step_id: null });
    expect(await reply(`<early-genuine-${runId}@mail.example.com>`, messageId)).toMatchObject({ consumed: true, runId });
  });

  it("the wait checks the sender itself: a reply from someone else is never consumed even when no reason was recorded", async () => {
    // As if it came in before the send was recorded (or before this rule existed): no reason, only its sender.
    const { runId, messageId } = await sent();
    const id = `<unrecorded-${runId}@evil.test>`;
    await forged(id, messageId);
    await t.sql.query("UPDATE signals SET unmatched_reason = NULL, run_id = NULL WHERE identity = $1", [id]);
    await walk(runId);
    expect(await waitStep(runId)).toMatchObject({ status: "waiting" });
    expect(await signal(id)).toMatchObject({ consumed_at: null, sender: "sam@evil.test" });
    expect(await reply(`<unrecorded-genuine-${runId}@mail.example.com>`, messageId)).toMatchObject({ consumed: true, runId });
  });

  it("a From naming several addresses, or none, is refused while the run waits", async () => {
    const { runId, messageId } = await sent();
    await walk(runId);
    const maya = recipients.get(messageId) as string;
    const outcome = await reply(`<two-${runId}@mail.example.com>`, messageId, { from: `${maya}, sam@evil.test` });
    expect(outcome).toMatchObject({ consumed: false, unmatchedReason: `sender "${maya}, sam@evil.test" is not one email address; the message it replies to went to ${maya}` });
    expect(await waitStep(runId)).toMatchObject({ status: "waiting" });
  });
});
