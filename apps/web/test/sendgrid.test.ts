import { parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { replyRoutingAddress } from "@holdfast/core/people";
import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleSendgridInbound, parseHeaderBlock } from "../src/server/sendgrid";

let t: TestDatabase;
const token = "inbound-token-0123456789";
let sent: { orgId: string; runId: string; stepId: string; messageId: string };

beforeAll(async () => {
  t = await createTestDatabase();
  const { orgId } = await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "e", kind: "end" },
      ],
      edges: [{ from: "t", to: "e" }],
    }),
  );
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", from: "a@acme.test" }, secret: null });
  // A run whose send_email step sent a message to lena@example.com (written as the step would have left it).
  const [{ id: automationId, version_id: versionId }] = (
    await t.sql.query("SELECT a.id, v.id AS version_id FROM automations a JOIN automation_versions v ON v.automation_id = a.id LIMIT 1")
  ).rows;
  const [{ id: runId }] = (
    await t.sql.query("INSERT INTO runs (org_id, automation_id, version_id, start_key, input) VALUES ($1, $2, $3, 'k1', '{}') RETURNING id", [orgId, automationId, versionId])
  ).rows;
  const messageId = "<hf.sendgrid-test@acme.test>";
  const [{ id: stepId }] = (
    await t.sql.query(
      `INSERT INTO steps (org_id, run_id, node_id, iteration, kind, lane, status, max_attempts, output, settled_at)
       VALUES ($1, $2, 'send', 1, 'send_email', 'io', 'done', 3, $3, now()) RETURNING id`,
      [orgId, runId, JSON.stringify({ messageId, to: "lena@example.com" })],
    )
  ).rows;
  sent = { orgId, runId, stepId, messageId };
});
afterAll(async () => {
  await t?.drop();
});

function form(fields: Record<string, string>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

const post = (body: FormData | string, opts: { auth?: string; query?: string; maxBytes?: number; headers?: Record<string, string> } = {}) =>
  handleSendgridInbound(
    t.db,
    new Request(`http://localhost/api/signals/email/sendgrid${opts.query ?? ""}`, {
      method: "POST",
      headers: { ...(opts.auth ? { authorization: opts.auth } : {}), ...opts.headers },
      body,
    }),
    { token, ...(opts.maxBytes ? { maxBytes: opts.maxBytes } : {}) },
  );
const basic = (password: string) => `Basic ${Buffer.from(`inbound:${password}`).toString("base64")}`;
const signals = async () => (await t.sql.query("SELECT identity, sender, unmatched_reason, correlation_keys FROM signals ORDER BY received_at")).rows;

describe("POST /api/signals/email/sendgrid (SendGrid Inbound Parse)", () => {
  it("accepts the multipart form with the token as basic auth, routed by the envelope's routing address", async () => {
    const to = replyRoutingAddress(sent, "reply.acme.test");
    const res = await post(
      form({
        from: "Lena <lena@example.com>",
        to: `Acme <${to}>`,
        subject: "Re: Quick question",
        text: "Tuesday works.",
        headers: "Message-ID: <sg-1@mail.example.com>\r\nSubject: Re: Quick question\r\nReferences:\r\n <unrelated@x.test>\r\n",
        envelope: JSON.stringify({ to: [to], from: "lena@example.com" }),
        dkim: "{@example.com : pass}",
        SPF: "pass",
      }),
      { auth: basic(token) },
    );
    expect(res.status).toBe(200); // stored; no step waits in this run
    const body = await res.json();
    expect(body).toMatchObject({ org: "acme", routed: true, duplicate: false });
    const [s] = await signals();
    expect(s).toMatchObject({ identity: "<sg-1@mail.example.com>", sender: "lena@example.com", unmatched_reason: null });
    expect(s.correlation_keys).toContain(sent.messageId); // matched by the routing address, not by References
  });

  it("accepts the token in the URL; without a routing address ?org= names the organisation", async () => {
    const res = await post(
      form({ from: "lena@example.com", to: "acme@reply.acme.test", subject: "hi", text: "x", headers: `Message-ID: <sg-2@mail.example.com>\nIn-Reply-To: ${sent.messageId}` }),
      { query: `?token=${token}&org=acme` },
    );
    expect(res.status).toBe(200);
    expect((await signals()).map((s) => s.identity)).toContain("<sg-2@mail.example.com>");
  });

  it("refuses a missing or wrong token, another content type, an oversize body and a forged routing address, storing nothing", async () => {
    const before = (await signals()).length;
    const f = () => form({ from: "lena@example.com", to: "x@y.test", subject: "s", text: "t", headers: "Message-ID: <sg-3@m.test>" });
    expect((await post(f())).status).toBe(401);
    expect((await post(f(), { auth: basic("wrong-token-0123456789") })).status).toBe(401);
    expect((await post(f(), { query: "?token=wrong-token-0123456789" })).status).toBe(401);
    expect((await post("{}", { auth: basic(token), headers: { "content-type": "application/json" } })).status).toBe(415);
    const big = form({ from: "lena@example.com", to: "x@y.test", subject: "s", text: "x".repeat(5_000), headers: "Message-ID: <sg-4@m.test>" });
    const over = await post(big, { auth: basic(token), maxBytes: 2_000 });
    expect(over.status).toBe(413);
    const to = replyRoutingAddress(sent, "reply.acme.test");
    const forged = to.replace(/^reply\+(.)/, (_m, c: string) => `reply+${c === "a" ? "b" : "a"}`);
    const refused = await post(form({ from: "lena@example.com", to: forged, subject: "s", text: "t", headers: "Message-ID: <sg-5@m.test>" }), { auth: basic(token) });
    expect(refused.status).toBe(422);
    expect((await refused.json()).error.message).toMatch(/not one this deployment issued/);
    expect((await signals()).length).toBe(before);
  });

  it("unfolds header lines", () => {
    const h = parseHeaderBlock("References: <a@x>\r\n <b@y>\r\nIn-Reply-To: <b@y>");
    expect(h.get("references")).toBe("<a@x> <b@y>");
    expect(h.get("in-reply-to")).toBe("<b@y>");
  });
});
