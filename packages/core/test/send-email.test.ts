import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection, reconnectConnection } from "../src/providers/connections/connect";
import { probeConnection } from "../src/providers/connections/probe";
import { eraseContact } from "../src/run/contacts/erase";
import { connectionsByName } from "../src/store/sql/connections";
import { messageIdFor } from "../src/providers/effects/send-email";
import { InvalidGraphError } from "../src/base/errors";
import { createLogger } from "../src/base/log";
import { contactsUnsubscribe } from "../src/store/sql/contacts";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let smtp: SmtpTarget;
let orgId: string;
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const emailGraph = (connection: string, extra: Record<string, unknown> = {}) =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      {
        id: "send",
        kind: "send_email",
        config: { connection, subject: "Hello {{input.name}}", text: "Hi {{input.name}}", html: "<p>{{input.note}}</p>", ...extra },
      },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "send" },
      { from: "send", to: "e" },
    ],
  });

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget({ credentials: { user: "sam", pass: "right" } });
  const seeded = await publish(t.db, emailGraph("mailbox"), { automation: "mail" });
  // The email goes to someone other than the run's contact (a colleague in copy).
  await publish(t.db, emailGraph("mailbox", { to: "{{input.cc}}" }), { automation: "mail-cc" });
  // Published before Publish refused raw output: its triple braces still render escaped.
  await publish(t.db, emailGraph("mailbox", { html: "<p>{{{input.note}}}</p>" }), { automation: "mail-raw" });
  orgId = seeded.orgId;
  const config = { host: "127.0.0.1", port: smtp.port, tls: "none", user: "sam", from: "Acme <hello@acme.test>" };
  await createConnection(t.db, { orgId, kind: "smtp", name: "mailbox", config, secret: "right" });
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });

async function start(automation: string, body: Record<string, unknown>) {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: "{}",
    body: { id: `m${++n}`, ...body },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  return { runId, stepId: stepId as string, key: `${runId}/send/1` };
}

describe("send_email over SMTP", () => {
  it("an old version's {{{input.note}}} in the HTML body is sent escaped, never as HTML", async () => {
    const { stepId, key } = await start("mail-raw", { email: "raw@example.com", name: "Raw", note: "<img src=x onerror=alert(1)>" });
    expect((await runner().run(stepId)).kind).toBe("settled");
    const sent = smtp.received.filter((m) => m.effectKey === key);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.raw).not.toContain("<img");
    const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [stepId]);
    expect(output.html).toBe("<p>&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt;</p>");
  });

  it("sends one message with a Message-ID from the effect key, the key in a header, the body escaped; a repeat replays", async () => {
    const { runId, stepId, key } = await start("mail", { email: "Maya@Example.com", name: "Maya", note: "<b>hi</b>" });
    const [run] = await rows("SELECT c.email FROM runs r JOIN contacts c ON c.id = r.contact_id WHERE r.id = $1", [runId]);
    expect(run.email).toBe("maya@example.com"); // the contact was resolved at the start
    expect((await runner().run(stepId)).kind).toBe("settled");
    const sent = smtp.received.filter((m) => m.effectKey === key);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.messageId).toBe(messageIdFor(key, "Acme <hello@acme.test>"));
    expect(sent[0]?.to).toEqual(["maya@example.com"]);
    expect(sent[0]?.raw).toContain("&lt;b&gt;hi&lt;/b&gt;");
    const [effect] = await rows("SELECT status, result FROM effects WHERE key = $1", [key]);
    expect(effect).toMatchObject({ status: "settled", result: { messageId: sent[0]?.messageId, to: "maya@example.com" } });
    // The step's output records what was sent, as sent (the run page shows it from here, never re-rendered).
    const [{ output }] = await rows("SELECT output FROM steps WHERE id = $1", [stepId]);
    expect(output).toMatchObject({
      messageId: sent[0]?.messageId,
      from: "Acme <hello@acme.test>",
      to: "maya@example.com",
      subject: "Hello Maya",
      text: "Hi Maya",
      html: "<p>&lt;b&gt;hi&lt;/b&gt;</p>",
    });
    expect(output.subject).toBe(sent[0]?.subject);
    expect(output.replyTo).toBeUndefined(); // no inbound domain configured here
    expect(effect.result).toMatchObject({ subject: output.subject, text: output.text, html: output.html });
    // The step is run again (its settle was lost): the stored answer comes back, no second message.
    await t.sql.query("UPDATE steps SET status = 'ready', advanced_at = NULL WHERE id = $1", [stepId]);
    await t.sql.query("UPDATE runs SET status = 'running', finished_at = NULL WHERE id = $1", [runId]);
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(smtp.received.filter((m) => m.effectKey === key)).toHaveLength(1);
  });

  it("a suppressed contact's step is skipped with the reason on the timeline and nothing is sent", async () => {
    const { runId, stepId, key } = await start("mail", { email: "gone@example.com", name: "Gone", note: "x" });
    await contactsUnsubscribe(t.db, orgId, "GONE@example.com");
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(smtp.received.filter((m) => m.effectKey === key)).toHaveLength(0);
    const events = await rows("SELECT type, data FROM run_events WHERE step_id = $1 AND type = 'step.skipped'", [stepId]);
    expect(events).toEqual([{ type: "step.skipped", data: { reason: "suppressed: unsubscribed" } }]);
    expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
  });

  it("100 races of unsubscribe against send: no message goes out after an unsubscribe committed", async () => {
    const races = await Promise.all(Array.from({ length: 100 }, (_, i) => start("mail", { email: `race${i}@example.com`, name: `R${i}`, note: "x" })));
    const r = runner();
    const unsubscribedAt = new Map<string, number>();
    await Promise.all(
      races.map(async (race, i) => {
        const email = `race${i}@example.com`;
        const [send] = await Promise.all([
          r.run(race.stepId),
          (async () => {
            await new Promise((res) => setTimeout(res, (i * 13) % 700)); // spread: some sends win, some unsubscribes
            await contactsUnsubscribe(t.db, orgId, email);
            // An instant after the unsubscribe committed, by the database clock.
            const [{ at }] = await rows("SELECT clock_timestamp() AS at");
            unsubscribedAt.set(race.key, new Date(at).getTime());
          })(),
        ]);
        expect(send.kind).toBe("settled");
      }),
    );
    let sentCount = 0;
    for (const race of races) {
      const [step] = await rows("SELECT output FROM steps WHERE id = $1", [race.stepId]);
      const checkedAt = new Date(step.output.consentCheckedAt).getTime();
      const received = smtp.received.filter((m) => m.effectKey === race.key).length;
      if (received) {
        sentCount++;
        // A send happened only if its consent check ran before the unsubscribe had committed.
        expect(checkedAt).toBeLessThanOrEqual(unsubscribedAt.get(race.key) as number);
        expect(received).toBe(1);
      } else {
        expect(step.output).toMatchObject({ skipped: true, reason: "suppressed: unsubscribed" });
      }
    }
    console.log(`unsubscribe vs send races: ${sentCount} sent before the unsubscribe, ${100 - sentCount} skipped, 0 after`);
  });

  it("a revoked password parks the run with a reason; reconnecting resumes the same step and one message arrives", async () => {
    smtp.setCredentials({ user: "sam", pass: "rotated" });
    try {
      const { runId, stepId, key } = await start("mail", { email: "parked@example.com", name: "P", note: "x" });
      expect((await runner().run(stepId)).kind).toBe("parked");
      const [step] = await rows("SELECT status, error FROM steps WHERE id = $1", [stepId]);
      expect(step.status).toBe("parked");
      expect(step.error.reason).toMatch(/reconnect it/);
      const [conn] = await rows("SELECT id, status, status_reason FROM connections WHERE org_id = $1 AND name = 'mailbox'", [orgId]);
      expect(conn.status).toBe("needs_reconnect");
      expect(await rows("SELECT count(*)::int AS n FROM effects WHERE key = $1", [key])).toEqual([{ n: 0 }]); // nothing was sent
      expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "running" }]);
      // Another run reaching the broken connection parks at once, without trying.
      const other = await start("mail", { email: "parked2@example.com", name: "P2", note: "x" });
      expect((await runner().run(other.stepId)).kind).toBe("parked");

      expect(await reconnectConnection(t.db, orgId, conn.id, "rotated", "test")).toBe(2);
      expect(await rows("SELECT type FROM run_events WHERE step_id = $1 AND type IN ('step.parked', 'step.resumed') ORDER BY id", [stepId])).toEqual([
        { type: "step.parked" },
        { type: "step.resumed" },
      ]);
      expect((await runner().run(stepId)).kind).toBe("settled");
      expect((await runner().run(other.stepId)).kind).toBe("settled");
      expect(smtp.received.filter((m) => m.effectKey === key)).toHaveLength(1);
      expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
    } finally {
      smtp.setCredentials({ user: "sam", pass: "right" });
      await t.sql.query("UPDATE connections SET status = 'ok' WHERE org_id = $1", [orgId]);
    }
  });

  it("a template reference that cannot resolve is refused at publish, or fails the step without a retry or a send", async () => {
    expect(() => emailGraph("mailbox", { text: "{{steps.nowhere.output}}" })).toThrow(InvalidGraphError);
    expect(() => emailGraph("mailbox", { text: "{{secrets.password}}" })).toThrow(InvalidGraphError);
    await publish(t.db, emailGraph("mailbox", { text: "Hi {{input.profile.first_name}}" }), { automation: "mail-missing" });
    const { stepId, key } = await start("mail-missing", { email: "tpl@example.com", name: "T", note: "x" });
    expect((await runner().run(stepId)).kind).toBe("failed");
    const [step] = await rows("SELECT error, attempt FROM steps WHERE id = $1", [stepId]);
    expect(step).toMatchObject({ attempt: 1, error: { code: "template_error" } });
    expect(smtp.received.filter((m) => m.effectKey === key)).toHaveLength(0);
  });

  it("the health probe marks a revoked mailbox before a run reaches it, and clears the mark (resuming parked steps) once it works", async () => {
    const [conn] = await rows("SELECT id FROM connections WHERE org_id = $1 AND name = 'mailbox'", [orgId]);
    const row = async () => (await connectionsByName(t.db, orgId, "mailbox")) as NonNullable<Awaited<ReturnType<typeof connectionsByName>>>;
    await reconnectConnection(t.db, orgId, conn.id, "probe-pass", "test"); // a known stored password
    smtp.setCredentials({ user: "sam", pass: "revoked-by-provider" });
    try {
      const before = smtp.received.length;
      expect(await probeConnection(t.db, await row())).toMatchObject({ status: "needs_reconnect" });
      const { stepId, key } = await start("mail", { email: "probe@example.com", name: "Pr", note: "x" });
      expect((await runner().run(stepId)).kind).toBe("parked"); // parked at once: no login attempt, no send
      expect(smtp.received.length).toBe(before);
      smtp.setCredentials({ user: "sam", pass: "probe-pass" }); // the provider restores the account (the stored password)
      expect(await probeConnection(t.db, await row())).toEqual({ status: "ok", resumed: 1 });
      expect(await rows("SELECT status FROM connections WHERE id = $1", [conn.id])).toEqual([{ status: "ok" }]);
      expect((await runner().run(stepId)).kind).toBe("settled");
      expect(smtp.received.filter((m) => m.effectKey === key)).toHaveLength(1);
    } finally {
      smtp.setCredentials({ user: "sam", pass: "probe-pass" });
    }
  });

  it("erasing a contact cancels its runs, scrubs their stored data, and still never writes to the address again", async () => {
    const done = await start("mail", { email: "erase-me@example.com", name: "Eve", note: "secret note" });
    expect((await runner().run(done.stepId)).kind).toBe("settled");
    // The recorded email carries her words (subject, bodies, address) until she is erased.
    expect((await rows("SELECT output FROM steps WHERE id = $1", [done.stepId]))[0].output).toMatchObject({
      to: "erase-me@example.com",
      subject: "Hello Eve",
      text: "Hi Eve",
      html: "<p>secret note</p>",
    });
    // Another contact's run wrote to her too: its record of that email names her and holds what it said.
    const copied = await start("mail-cc", { email: "boss@example.com", cc: "Erase-Me@example.com", name: "Eve", note: "about Eve" });
    expect((await runner().run(copied.stepId)).kind).toBe("settled");
    expect((await rows("SELECT output FROM steps WHERE id = $1", [copied.stepId]))[0].output).toMatchObject({ to: "Erase-Me@example.com", subject: "Hello Eve" });
    await contactsUnsubscribe(t.db, orgId, "erase-me@example.com");
    const waiting = await start("mail", { email: "Erase-Me@example.com", name: "Eve", note: "second" });
    // Copies outside the runs: the automation's sample payload (the editor's picker, Test run) and the delivery log.
    await t.sql.query(`UPDATE automations SET sample_input = '{"email":"erase-me@example.com","name":"Eve"}' WHERE org_id = $1`, [orgId]);
    const [{ automation_id: automationId }] = await rows("SELECT automation_id FROM runs WHERE id = $1", [done.runId]);
    await t.sql.query(
      "INSERT INTO trigger_deliveries (org_id, automation_id, outcome, status, start_key, run_id) VALUES ($1, $2, 'accepted', 202, $3, $4), ($1, $2, 'duplicate', 200, 'ev:erase-me@example.com', NULL)",
      [orgId, automationId, "wh:1", done.runId],
    );
    const outcome = await eraseContact(t.db, graphs, orgId, "erase-me@example.com", "test");
    expect(outcome).toEqual({ found: true, cancelled: 1, cancelRequested: 0, scrubbed: 2 });
    expect(await rows("SELECT count(*)::int AS n FROM automations WHERE org_id = $1 AND sample_input::text ILIKE '%erase-me%'", [orgId])).toEqual([{ n: 0 }]);
    expect(await rows("SELECT count(*)::int AS n FROM trigger_deliveries WHERE org_id = $1", [orgId])).toEqual([{ n: 0 }]);
    expect(await rows("SELECT status, input FROM runs WHERE id = $1", [waiting.runId])).toEqual([{ status: "cancelled", input: { erased: true } }]);
    expect(await rows("SELECT input FROM runs WHERE id = $1", [done.runId])).toEqual([{ input: { erased: true } }]);
    expect(await rows("SELECT output FROM steps WHERE id = $1", [done.stepId])).toEqual([{ output: { erased: true } }]);
    expect(await rows("SELECT result FROM effects WHERE key = $1", [done.key])).toEqual([{ result: { erased: true } }]);
    const sentWords = await rows(
      `SELECT (SELECT count(*)::int FROM steps WHERE run_id = ANY($1) AND output::text ~ '(erase-me|Eve|secret note)')
            + (SELECT count(*)::int FROM effects WHERE run_id = ANY($1) AND result::text ~ '(erase-me|Eve|secret note)') AS n`,
      [[done.runId, waiting.runId]],
    );
    expect(sentWords).toEqual([{ n: 0 }]); // nothing of the sent email's record is left
    expect(await rows("SELECT output FROM steps WHERE id = $1", [copied.stepId])).toEqual([{ output: { erased: true } }]);
    expect(await rows("SELECT result FROM effects WHERE key = $1", [copied.key])).toEqual([{ result: { erased: true } }]);
    expect(await rows("SELECT status FROM runs WHERE id = $1", [copied.runId])).toEqual([{ status: "completed" }]); // not hers: not cancelled
    const leftovers = await rows(
      "SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1) AND data::text ILIKE '%erase-me%'",
      [[done.runId, waiting.runId]],
    );
    expect(leftovers).toEqual([{ n: 0 }]);
    expect(await rows("SELECT count(*)::int AS n FROM contacts WHERE email = 'erase-me@example.com'")).toEqual([{ n: 0 }]);
    expect(await rows("SELECT email FROM suppressions WHERE org_id = $1 AND email LIKE 'sha256:%'", [orgId])).toHaveLength(1);
    // The person comes back through a new trigger: the hashed suppression still stops the send.
    const again = await start("mail", { email: "erase-me@example.com", name: "Eve", note: "third" });
    expect((await runner().run(again.stepId)).kind).toBe("settled");
    expect(smtp.received.filter((m) => m.effectKey === again.key)).toHaveLength(0);
    // Erasing again finds every run through the tombstone, the earlier ones too.
    expect(await eraseContact(t.db, graphs, orgId, "erase-me@example.com", "test")).toMatchObject({ found: true, scrubbed: 3 });
    expect(await rows("SELECT count(*)::int AS n FROM contacts WHERE org_id = $1 AND email LIKE 'sha256:%'", [orgId])).toEqual([{ n: 1 }]);
  });
});
