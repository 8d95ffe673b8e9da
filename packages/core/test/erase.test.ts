import { approvalGraph, createTestDatabase, publish, replyGraph, type SmtpTarget, startSmtpTarget, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { eraseContact } from "../src/run/contacts/erase";
import { advanceRun } from "../src/run/engine/advance";
import { createLogger } from "../src/base/log";
import { ingestEmailReply } from "../src/people/signals/email";
import { StepRunner } from "../src/run/steps/runner";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Erasing a contact reaches the copies of their words outside runs, steps and effects: the replies they sent
 * (`signals` payloads, matched to a run or not) and the approvals their runs asked for (title and content).
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId = "";
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  orgId = (await publish(t.db, replyGraph(), { automation: "reply" })).orgId;
  await publish(t.db, approvalGraph(), { automation: "review" });
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

/** A reply run for `email` whose email went out and which now waits for the answer: the run and the sent Message-ID. */
async function waitingForReply(email: string): Promise<{ runId: string; messageId: string }> {
  const runId = await startTestRun(t.db, "reply", { id: `r${++n}`, email });
  const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log });
  expect((await runner.run(id)).kind).toBe("settled");
  const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [id]);
  await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" });
  return { runId, messageId: output.messageId as string };
}

const reply = (from: string, inReplyTo: string | undefined, text: string) =>
  ingestEmailReply(t.db, "acme", { messageId: `<m${++n}@mail.example.com>`, from: `Them <${from}>`, subject: "Re: Hi", inReplyTo, text });

describe("erasing a contact", () => {
  it("scrubs their replies from signals and their runs' approvals of title and content; another contact's stay", async () => {
    const eve = await waitingForReply("eve@example.com");
    expect(await reply("eve@example.com", eve.messageId, "Eve's private answer")).toMatchObject({ consumed: true, runId: eve.runId });
    // A reply that names no message a run sent: stored with no run, found by its sender.
    expect(await reply("EVE@example.com", "<unknown@example.com>", "Eve writes again")).toMatchObject({ consumed: false, runId: null });
    const eveReview = await startTestRun(t.db, "review", { id: `a${++n}`, email: "eve@example.com", draft: "Dear Eve, about your divorce" });
    const kept = await waitingForReply("kim@example.com");
    expect(await reply("kim@example.com", kept.messageId, "Kim's answer")).toMatchObject({ consumed: true });
    const kimReview = await startTestRun(t.db, "review", { id: `a${++n}`, email: "kim@example.com", draft: "Dear Kim" });
    const before = await rows("SELECT count(*)::int AS n FROM approvals WHERE run_id = $1 AND title ILIKE '%eve@example.com%'", [eveReview]);
    expect(before).toEqual([{ n: 1 }]); // the approval exists and names her
    // Her approval was posted to Slack: the message there is owed an update that shows the erased text.
    await t.sql.query(`UPDATE approvals SET slack_message = '{"channel":"C1","ts":"1.2"}', notify_state = 'done' WHERE run_id = $1`, [eveReview]);

    expect(await eraseContact(t.db, graphs, orgId, "eve@example.com", "test")).toMatchObject({ found: true, scrubbed: 2 });

    const signalText = await rows("SELECT count(*)::int AS n FROM signals WHERE org_id = $1 AND (payload::text || coalesce(sender, '')) ILIKE '%eve%'", [orgId]);
    expect(signalText).toEqual([{ n: 0 }]);
    expect(await rows("SELECT count(*)::int AS n FROM signals WHERE org_id = $1 AND payload = '{\"erased\": true}'::jsonb", [orgId])).toEqual([{ n: 2 }]);
    const approvalText = await rows("SELECT count(*)::int AS n FROM approvals WHERE org_id = $1 AND (title || content) ILIKE '%eve%'", [orgId]);
    expect(approvalText).toEqual([{ n: 0 }]);
    const [posted] = await rows("SELECT id, notify_state FROM approvals WHERE run_id = $1", [eveReview]);
    expect(posted.notify_state).toBe("update");
    expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE topic = 'approval.notify' AND payload->>'approvalId' = $1 AND sent_at IS NULL", [posted.id])).toEqual([{ n: 1 }]);
    // Scoped to her: Kim's reply and approval are as they were.
    expect(await rows("SELECT payload->>'text' AS text FROM signals WHERE run_id = $1", [kept.runId])).toEqual([{ text: "Kim's answer" }]);
    expect(await rows("SELECT title, content FROM approvals WHERE run_id = $1", [kimReview])).toEqual([
      { title: "Send the follow-up to kim@example.com?", content: "Dear Kim" },
    ]);
  });

  it("moves the seq of another contact's run whose sent email it erases: a worker's walk from the old steps no longer applies", async () => {
    const other = await waitingForReply("olga@example.com");
    // Olga's run sent an email to Uma (a colleague notified): its send step records it.
    await rows("UPDATE steps SET output = jsonb_set(output, '{to}', '\"uma@example.com\"') WHERE run_id = $1 AND node_id = 'send'", [other.runId]);
    const [{ seq }] = await rows("SELECT seq::int AS seq FROM runs WHERE id = $1", [other.runId]);
    await waitingForReply("uma@example.com");
    await eraseContact(t.db, graphs, orgId, "uma@example.com", "test");
    expect(await rows("SELECT output FROM steps WHERE run_id = $1 AND node_id = 'send'", [other.runId])).toEqual([{ output: { erased: true } }]);
    expect(await rows("SELECT seq::int AS seq, status FROM runs WHERE id = $1", [other.runId])).toEqual([{ seq: seq + 1, status: "running" }]);
  });
});
