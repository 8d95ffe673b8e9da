import { createLogger, lanes } from "@holdfast/core/base";
import { issueClickToken, recordBounce, recordClick, sessionUser, signIn, upsertMember, verifyClickToken } from "@holdfast/core/people";
import { createConnection } from "@holdfast/core/providers";
import { StepRunner, startRun } from "@holdfast/core/run";
import { GraphCache } from "@holdfast/core/versions";
import { createTestDatabase, lineGraph, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDetail } from "../src/server/runs";
import { createCallerFactory } from "../src/server/trpc/init";
import { appRouter } from "../src/server/trpc/router";

/**
 * The email rates the trigger's panel, the send step's panel and the run page show (issue 43) come from the journey
 * counts, as the canvas's do: per send step, over every version and all time, they equal a scan of email_messages
 * made here (the read itself never scans them). Real sends to a real SMTP server, real clicks and bounces.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId = "";
let automationId = "";
const createCaller = createCallerFactory(appRouter);
const graphs = new GraphCache();
const log = createLogger("test", "silent");
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const send = (id: string, subject: string) => ({ id, kind: "send_email", config: { connection: "mail", subject, text: "See https://shop.example.com/a" } });
const v1 = lineGraph({ id: "t", kind: "trigger", config: { eventIdField: "id" } }, send("send", "Offer"), { id: "e", kind: "end" });
const v2 = lineGraph({ id: "t", kind: "trigger", config: { eventIdField: "id" } }, send("send", "Offer"), send("send2", "Offer, again"), { id: "e", kind: "end" });

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  ({ orgId, automationId } = await publish(t.db, v1, { automation: "offer" }));
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "hello@acme.test" }, secret: null });
  await upsertMember(t.db, { orgId, email: "vera@acme.test", name: "Vera", password: "a long enough password", role: "viewer" });
  process.env.HOLDFAST_PUBLIC_URL = "https://holdfast.example.com";
}, 60_000);
afterAll(async () => {
  delete process.env.HOLDFAST_PUBLIC_URL;
  await smtp?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });

/** A run of "offer" (its newest version) for `email`, each of its send steps settled; the effect keys it sent. */
async function sendAll(email: string, nodes: string[]): Promise<{ runId: string; keys: string[] }> {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "offer",
    rawBody: "{}",
    body: { id: `m${++n}`, email },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  for (const node of nodes) {
    const [step] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = $2", [runId, node]);
    expect((await runner().run(step.id)).kind).toBe("settled");
  }
  return { runId, keys: nodes.map((node) => `${runId}/${node}/1`) };
}

const click = async (key: string) => {
  const claims = verifyClickToken(issueClickToken({ orgId, effectKey: key }, "https://shop.example.com/a"));
  return recordClick(t.db, claims as NonNullable<typeof claims>);
};
const bounce = async (key: string, status: string) => {
  const [ref] = await rows(`SELECT org_id AS "orgId", run_id AS "runId", step_id AS "stepId", effect_key AS "effectKey", recipient FROM email_messages WHERE effect_key = $1`, [key]);
  return recordBounce(t.db, ref, `Reporting-MTA: dns; mx\r\n\r\nFinal-Recipient: rfc822; x@y.z\r\nAction: failed\r\nStatus: ${status}\r\n`);
};

/** The test's own count: per send step, its messages (of runs that are not test runs) that reached each outcome. */
async function scan() {
  return (
    await rows(
      `SELECT m.node_id AS "nodeId", count(*)::int AS sent, count(m.delivered_at)::int AS delivered, count(m.bounced_at)::int AS bounced,
              count(m.opened_at)::int AS opened, count(m.clicked_at)::int AS clicked, count(m.replied_at)::int AS replied,
              count(m.unsubscribed_at)::int AS unsubscribed
       FROM email_messages m JOIN runs r ON r.id = m.run_id
       WHERE m.org_id = $1 AND m.automation_id = $2 AND NOT r.test GROUP BY m.node_id ORDER BY m.node_id`,
      [orgId, automationId],
    )
  ).map((r) => ({ ...r }));
}

describe("the email rates of the panels and the run page", () => {
  it("are the journey counts' figures per send step, over every version: equal to a scan of the messages", async () => {
    const vera = createCaller({ db: t.db, user: await sessionUser(t.db, (await signIn(t.db, "vera@acme.test", "a long enough password"))?.token) });
    // Nothing sent yet: no step listed.
    expect((await vera.emails.summary({ orgSlug: "acme", automationId })).steps).toEqual([]);

    const first = [await sendAll("a@example.com", ["send"]), await sendAll("b@example.com", ["send"]), await sendAll("c@example.com", ["send"])];
    await publish(t.db, v2, { automation: "offer" });
    const second = [await sendAll("d@example.com", ["send", "send2"]), await sendAll("e@example.com", ["send", "send2"])];
    // Clicks (one message twice), a permanent and a transient bounce, over both versions.
    for (const key of [first[0]?.keys[0], first[0]?.keys[0], second[0]?.keys[1], second[1]?.keys[0]]) expect((await click(key as string)).recorded).not.toBe("unknown");
    await bounce(first[1]?.keys[0] as string, "5.1.1");
    await bounce(second[1]?.keys[1] as string, "4.2.2");

    const expected = await scan();
    expect(expected.map((s) => [s.nodeId, s.sent, s.clicked, s.bounced])).toEqual([
      ["send", 5, 2, 1],
      ["send2", 2, 1, 1],
    ]);
    const summary = await vera.emails.summary({ orgSlug: "acme", automationId });
    expect(summary.steps).toEqual(expected);

    // The run page: the message's own outcomes from its row, the step's figures from the same counts.
    const detail = await runDetail(t.db, [orgId], first[0]?.runId as string);
    expect(detail?.emails.map((m) => [m.nodeId, m.clickCount, m.clickedAt !== null])).toEqual([["send", 2, true]]);
    expect(detail?.emailRates).toEqual(expected);
    // Another organisation's member sees no run.
    expect(await runDetail(t.db, ["org_other"], first[0]?.runId as string)).toBeNull();
  });
});
