import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createLogger } from "../src/base/log";
import { readDeliveryStatus, recordBounce, resolveBounceAddress } from "../src/people/email-outcomes/bounce";
import { decorateEmail, trackHtmlLinks, trackTextLinks } from "../src/people/email-outcomes/links";
import { recordClick } from "../src/people/email-outcomes/record";
import { isTrackableTarget, issueClickToken, issueOpenToken, verifyClickToken, verifyOpenToken } from "../src/people/email-outcomes/tokens";
import { createConnection } from "../src/providers/connections/connect";
import { journeyCounts } from "../src/run/counts/journey-counts";
import { eraseContact } from "../src/run/contacts/erase";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { countChangesFold } from "../src/store/sql/count-changes";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Email outcomes (issue 43) in core: the tokens of tracked links, the rewriting of a message's links, the reading of
 * delivery status reports, and against the real database and an SMTP server: one email_messages row per real send,
 * written with its counts in the settle's transaction, and each outcome's first occurrence counted once however many
 * arrive at once, the run's first click once across its messages.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let orgId: string;
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const body = { subject: "Offer", text: "See https://shop.example.com/a?x=1&y=2.", html: '<p><a href="https://shop.example.com/a?x=1&amp;y=2">offer</a></p>' };
const twoSends = parseGraph({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "send", kind: "send_email", config: { connection: "mail", ...body } },
    { id: "send2", kind: "send_email", config: { connection: "mail", ...body, subject: "Offer, again" } },
    { id: "e", kind: "end" },
  ],
  edges: [
    { from: "t", to: "send" },
    { from: "send", to: "send2" },
    { from: "send2", to: "e" },
  ],
});

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget();
  ({ orgId } = await publish(t.db, twoSends, { automation: "offer" }));
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "hello@acme.test" }, secret: null });
  process.env.HOLDFAST_PUBLIC_URL = "https://holdfast.example.com";
  process.env.INBOUND_EMAIL_DOMAIN = "in.acme.test";
});
afterAll(async () => {
  delete process.env.HOLDFAST_PUBLIC_URL;
  delete process.env.INBOUND_EMAIL_DOMAIN;
  await smtp?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });

/** A run of "offer" for `email` with both its emails sent. */
async function sendBoth(email: string) {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "offer",
    rawBody: "{}",
    body: { id: `m${++n}`, email },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  for (const node of ["send", "send2"]) {
    const [step] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = $2", [runId, node]);
    expect((await runner().run(step.id)).kind).toBe("settled");
  }
  return { runId, keys: [`${runId}/send/1`, `${runId}/send2/1`] };
}

const changes = async (runId: string) =>
  (await rows("SELECT node_id, to_bucket FROM count_changes WHERE run_id = $1 AND (to_bucket LIKE 'email:%' OR to_bucket LIKE 'outcome:%') ORDER BY to_bucket, node_id", [runId])).map(
    (r) => `${r.node_id || "(run)"} ${r.to_bucket}`,
  );

describe("tracked links and their tokens", () => {
  const m = { orgId: "org_1", effectKey: "run_1/send/1" };

  it("a click token opens only as issued: every changed claim or signature is refused", () => {
    const token = issueClickToken(m, "https://shop.example.com/a?x=1");
    expect(verifyClickToken(token)).toEqual({ p: "click", o: "org_1", k: "run_1/send/1", u: "https://shop.example.com/a?x=1" });
    const [b, mac] = token.split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(b, "base64url").toString());
    const forged = (c: object) => `${Buffer.from(JSON.stringify({ ...claims, ...c })).toString("base64url")}.${mac}`;
    for (const u of ["//evil.com", "/\\evil.com", "https:evil", "javascript:alert(1)", "https://evil.com", "https://shop.example.com/a?x=2"]) expect(verifyClickToken(forged({ u })), u).toBeNull();
    expect(verifyClickToken(forged({ o: "org_2" }))).toBeNull();
    expect(verifyClickToken(forged({ k: "run_2/send/1" }))).toBeNull();
    expect(verifyOpenToken(token)).toBeNull(); // a click token is not an open token
    expect(verifyClickToken(issueOpenToken(m))).toBeNull();
    expect(verifyClickToken(`${token}x`)).toBeNull();
    expect(verifyClickToken(`${b}.${mac}${"A".repeat(4_000)}`)).toBeNull();
  });

  it("only plain absolute http(s) URLs are targets", () => {
    for (const ok of ["https://shop.example.com", "http://x.example/a?b=c#d", "HTTPS://Shop.Example.com/A"]) expect(isTrackableTarget(ok), ok).toBe(true);
    for (const bad of ["//evil.com", "/\\evil.com", "https:evil", "https:/evil.com", "https:///evil.com", "javascript:alert(1)", "data:text/html,x", "mailto:a@b.c", " https://x.example", "https://x.example/a b", "https://x.example/\r\nLocation: y", "https://x.example\\@evil.com", `https://x.example/${"a".repeat(2_100)}`]) {
      expect(isTrackableTarget(bad), bad).toBe(false);
    }
  });

  it("every tracked link opens; a link too long for a token (a long non-ASCII path) goes out as written", () => {
    const long = `https://shop.example.com/${"é".repeat(1_500)}`;
    const short = "https://shop.example.com/ok";
    const out = decorateEmail(
      { text: `${long} and ${short}`, html: `<a href="${long}">l</a><a href="${short}">s</a>` },
      { base: "https://hf.example", message: { orgId: "org_x", effectKey: "run_x/send/1" }, trackOpens: false, unsubscribeUrl: null, writtenHosts: new Set(["shop.example.com"]) },
    );
    for (const body of [out.text ?? "", out.html ?? ""]) {
      const tokens = [...body.matchAll(/\/api\/email\/click\/([^\s"]+)/g)].map((m) => m[1] as string);
      expect(tokens.map((tok) => verifyClickToken(tok)?.u)).toEqual([short]);
      expect(body).toContain(long);
    }
  });

  it("rewrites http(s) hrefs and bare URLs, leaves others, and adds the footer and pixel last", () => {
    const track = (u: string) => `T(${u})`;
    expect(trackHtmlLinks(`<a class="x" href="https://a.example/?p=1&amp;q=2">a</a> <a href='mailto:x@y.z'>m</a> <area href="http://b.example">`, track)).toBe(
      `<a class="x" href="T(https://a.example/?p=1&#38;q=2)">a</a> <a href='mailto:x@y.z'>m</a> <area href="T(http://b.example)">`,
    );
    expect(trackTextLinks("Go to https://a.example/x. Or (https://b.example/y) now", track)).toBe("Go to T(https://a.example/x). Or (T(https://b.example/y)) now");
    const out = decorateEmail({ text: "t", html: "<html><body><p>x</p></body></html>" }, { base: "https://hf.example", message: { orgId: "o", effectKey: "k" }, trackOpens: true, unsubscribeUrl: "https://hf.example/api/unsubscribe/tok", writtenHosts: new Set() });
    expect(out.text).toBe("t\n\n--\nTo stop these emails, unsubscribe: https://hf.example/api/unsubscribe/tok\n");
    expect(out.html).toMatch(/^<html><body><p>x<\/p><p [^>]+>Don't want these emails\? <a href="https:\/\/hf\.example\/api\/unsubscribe\/tok"[^>]*>Unsubscribe<\/a>\.<\/p><img src="https:\/\/hf\.example\/api\/email\/open\/[^"]+" width="1" height="1"[^>]*><\/body><\/html>$/);
  });
});

describe("delivery status reports", () => {
  const report = (fields: string) => `Reporting-MTA: dns; mx.example.net\r\n\r\nFinal-Recipient: rfc822; a@b.example\r\n${fields}\r\n`;
  it("reads the first failed recipient's status; delays and successes are not bounces", () => {
    expect(readDeliveryStatus(report("Action: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 user\r\n unknown"))).toEqual({ status: "5.1.1", permanent: true, detail: "550 5.1.1 user unknown" });
    expect(readDeliveryStatus(report("Action: failed\r\nStatus: 4.2.2"))).toMatchObject({ status: "4.2.2", permanent: false });
    expect(readDeliveryStatus(report("Action: delayed\r\nStatus: 4.4.7"))).toBeNull();
    expect(readDeliveryStatus(report("Action: delivered\r\nStatus: 2.0.0"))).toBeNull();
    expect(readDeliveryStatus(report("Action: failed\r\nStatus: five"))).toBeNull();
    expect(readDeliveryStatus("")).toBeNull();
  });
});

describe("email_messages and their counts", () => {
  it("a real send writes its row and its sent/delivered counts once, with a VERP envelope sender that resolves to it", async () => {
    const { runId, keys } = await sendBoth("lena@example.com");
    const sent = await rows("SELECT effect_key, node_id, recipient, delivered_at IS NOT NULL AS delivered FROM email_messages WHERE run_id = $1 ORDER BY node_id", [runId]);
    expect(sent).toEqual([
      { effect_key: keys[0], node_id: "send", recipient: "lena@example.com", delivered: true },
      { effect_key: keys[1], node_id: "send2", recipient: "lena@example.com", delivered: true },
    ]);
    expect(await changes(runId)).toEqual(["send email:delivered", "send2 email:delivered", "send email:sent", "send2 email:sent"]);
    const mail = smtp.received.find((r) => r.effectKey === keys[0]);
    expect(mail?.mailFrom).toMatch(/^bounce\+[a-z2-7]{42}@in\.acme\.test$/);
    expect(await resolveBounceAddress(t.db, mail?.mailFrom as string)).toMatchObject({ orgId, runId, effectKey: keys[0] });
    // Another message's bounce address, the reply address, or a changed token: none resolves.
    expect(await resolveBounceAddress(t.db, (mail?.replyTo ?? "").replace(/^reply/, "bounce"))).toBeNull();
    expect(await resolveBounceAddress(t.db, (mail?.mailFrom ?? "").replace(/^bounce\+(.)/, (_m, c: string) => `bounce+${c === "a" ? "b" : "a"}`))).toBeNull();
    // The settle is lost and the step runs again: the stored answer comes back, nothing is written twice.
    const [step] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    await t.sql.query("UPDATE steps SET status = 'ready', advanced_at = NULL WHERE id = $1", [step.id]);
    await t.sql.query("UPDATE runs SET status = 'running', finished_at = NULL WHERE id = $1", [runId]);
    expect((await runner().run(step.id)).kind).toBe("settled");
    expect(await rows("SELECT count(*)::int AS n FROM email_messages WHERE run_id = $1", [runId])).toEqual([{ n: 2 }]);
    expect((await changes(runId)).length).toBe(4);
  });

  it("only links to hosts the templates write out go through the redirect: a URL from a form's field stays as it came", async () => {
    const text = "Hi {{input.name}}, see https://shop.example.com/a";
    const html = '<p>{{input.name}} <a href="https://shop.example.com/b">b</a> <a href="{{input.site}}">site</a> <a href="https://{{input.host}}/c">c</a></p>';
    const graph = parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "send", kind: "send_email", config: { connection: "mail", subject: "Hi", text, html } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "send" },
        { from: "send", to: "e" },
      ],
    });
    await publish(t.db, graph, { automation: "form-links" });
    const input = { id: "f1", email: "form@example.com", name: "https://evil.example/phish", site: "https://evil.example/site", host: "evil.example" };
    const headers = { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null };
    const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "form-links", rawBody: "{}", body: input, headers, via: "test", auth: { kind: "operator" } });
    const [step] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    expect((await runner().run(step.id)).kind).toBe("settled");
    const raw = smtp.received.find((r) => r.effectKey === `${runId}/send/1`)?.raw ?? "";
    const decoded = raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    const targets = [...decoded.matchAll(/\/api\/email\/click\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/g)].map((m) => verifyClickToken(m[1] as string)?.u);
    expect(targets.sort()).toEqual(["https://shop.example.com/a", "https://shop.example.com/b"]);
    for (const untouched of ["https://evil.example/phish", 'href="https://evil.example/site"', 'href="https://evil.example/c"']) expect(decoded).toContain(untouched);
  });

  it("100 clicks at once over a run's two messages: each message's first click once, the run's first click once", async () => {
    const { runId, keys } = await sendBoth("kim@example.com");
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const claims = verifyClickToken(issueClickToken({ orgId, effectKey: keys[i % 2] as string }, "https://shop.example.com/a?x=1&y=2"));
        return recordClick(t.db, claims as NonNullable<typeof claims>);
      }),
    );
    console.log(`100 concurrent clicks over 2 messages recorded in ${Math.round(performance.now() - started)} ms`);
    expect(answers.filter((a) => a.recorded === "first")).toHaveLength(2);
    expect(new Set(answers.map((a) => a.target))).toEqual(new Set(["https://shop.example.com/a?x=1&y=2"]));
    expect(await rows("SELECT node_id, click_count FROM email_messages WHERE run_id = $1 ORDER BY node_id", [runId])).toEqual([
      { node_id: "send", click_count: 50 },
      { node_id: "send2", click_count: 50 },
    ]);
    expect(await changes(runId)).toEqual(["send email:clicked", "send2 email:clicked", "send email:delivered", "send2 email:delivered", "send email:sent", "send2 email:sent", "(run) outcome:clicked"]);
    // Another organisation's key through a token signed for it: no such message, nothing recorded.
    const other = verifyClickToken(issueClickToken({ orgId: "org_other", effectKey: keys[0] as string }, "https://shop.example.com/"));
    expect((await recordClick(t.db, other as NonNullable<typeof other>)).recorded).toBe("unknown");
  });

  it("a permanent bounce suppresses the address, a transient one does not; erasing the contact removes the address", async () => {
    const gone = await sendBoth("gone@example.com");
    const full = await sendBoth("full@example.com");
    const ref = async (key: string) => (await rows("SELECT org_id AS \"orgId\", run_id AS \"runId\", step_id AS \"stepId\", effect_key AS \"effectKey\", recipient FROM email_messages WHERE effect_key = $1", [key]))[0];
    const dsn = (status: string) => `Reporting-MTA: dns; mx\r\n\r\nFinal-Recipient: rfc822; x@y.z\r\nAction: failed\r\nStatus: ${status}\r\n`;
    expect(await recordBounce(t.db, await ref(gone.keys[0] as string), dsn("5.1.1"))).toMatchObject({ kind: "bounced", first: true, suppressed: true });
    expect(await recordBounce(t.db, await ref(gone.keys[0] as string), dsn("5.1.1"))).toMatchObject({ kind: "bounced", first: false, suppressed: false });
    expect(await recordBounce(t.db, await ref(full.keys[0] as string), dsn("4.2.2"))).toMatchObject({ kind: "bounced", first: true, suppressed: false });
    expect(await rows("SELECT email FROM suppressions WHERE org_id = $1 AND email IN ('gone@example.com', 'full@example.com')", [orgId])).toEqual([{ email: "gone@example.com" }]);
    expect(await changes(gone.runId)).toContain("send email:bounced");
    await eraseContact(t.db, graphs, orgId, "full@example.com", "test");
    expect(await rows("SELECT recipient FROM email_messages WHERE run_id = $1", [full.runId])).toEqual([{ recipient: expect.stringMatching(/^sha256:/) }, { recipient: expect.stringMatching(/^sha256:/) }]);
  });

  it("each send step's figures in the journey counts equal a scan of its messages, before, during and after the fold", async () => {
    // Every run above, with clicks, bounces and an erased address: the rates' numbers come from the counts alone.
    const [{ id: automationId }] = await rows("SELECT id FROM automations WHERE org_id = $1 AND slug = 'offer'", [orgId]);
    const scan = async () =>
      Object.fromEntries(
        (
          await rows(
            `SELECT m.node_id, count(*)::int AS sent, count(m.delivered_at)::int AS delivered, count(m.bounced_at)::int AS bounced,
                    count(m.opened_at)::int AS opened, count(m.clicked_at)::int AS clicked, count(m.replied_at)::int AS replied,
                    count(m.unsubscribed_at)::int AS unsubscribed
             FROM email_messages m JOIN runs r ON r.id = m.run_id
             WHERE m.org_id = $1 AND m.automation_id = $2 AND NOT r.test GROUP BY m.node_id`,
            [orgId, automationId],
          )
        ).map(({ node_id, ...figures }) => [node_id, figures]),
      );
    const read = async () => {
      const { nodes } = await journeyCounts(t.db, { orgId, automationId, versionId: null, window: "all" });
      return { send: nodes.send?.email, send2: nodes.send2?.email };
    };
    const expected = await scan();
    expect(expected.send.sent).toBeGreaterThan(3);
    expect(expected.send.clicked + expected.send.bounced).toBeGreaterThan(0);
    expect(await read()).toEqual(expected);
    await inTx(t.db, (tx) => countChangesFold(tx, 7)); // part folded, part pending: one read sums both
    expect(await read()).toEqual(expected);
    while ((await inTx(t.db, (tx) => countChangesFold(tx, 1000))).folded > 0);
    expect(await read()).toEqual(expected);
  });
});
