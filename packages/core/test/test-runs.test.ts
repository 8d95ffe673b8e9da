import {
  type CrmTarget,
  createTestDatabase,
  type HttpTarget,
  publish,
  type SmtpTarget,
  startCrmTarget,
  startHttpTarget,
  startSmtpTarget,
  type TestDatabase,
} from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { createLogger } from "../src/base/log";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { testScript } from "../src/run/test-runs/script";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

/**
 * Test runs simulate every effect by kind (issue 40): the same connectors, templates and answer classification as a
 * real run, with the provider's part handed to the simulation. The SMTP server, the CRM and the HTTP target here are
 * real servers that count what reaches them: a test run reaches none of them, unless "Send to me" was asked.
 */
let t: TestDatabase;
let smtp: SmtpTarget;
let crm: CrmTarget;
let target: HttpTarget;
let orgId = "";
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startSmtpTarget({ credentials: { user: "sam", pass: "right" } });
  crm = await startCrmTarget(["crm-token"]);
  target = await startHttpTarget();
  const graph = parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id", contactEmailField: "email" } },
      { id: "call", kind: "http_request", config: { url: `${target.url}/hook`, method: "POST", headers: { Authorization: "Bearer abc-secret" }, body: { lead: "x" } } },
      { id: "send", kind: "send_email", config: { connection: "mailbox", subject: "Hello {{input.name}}", text: "Hi {{input.name}}, see https://shop.example.com/offer" } },
      { id: "sync", kind: "crm_upsert", config: { connection: "crm", object: "contact", fields: { email: "{{contact.email}}", stage: "emailed" } } },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "call" },
      { from: "call", to: "send" },
      { from: "send", to: "sync" },
      { from: "sync", to: "e" },
    ],
  });
  ({ orgId } = await publish(t.db, graph, { automation: "story" }));
  await createConnection(t.db, { orgId, kind: "smtp", name: "mailbox", config: { host: "127.0.0.1", port: smtp.port, tls: "none", user: "sam", from: "Acme <hello@acme.test>" }, secret: "right" });
  await createConnection(t.db, { orgId, kind: "crm", name: "crm", config: { baseUrl: crm.baseUrl }, secret: "crm-token" });
  // Maya is a stored contact: a test run must leave her as she is.
  await t.sql.query("INSERT INTO contacts (org_id, email, time_zone, consent) VALUES ($1, 'maya@example.com', 'Europe/Berlin', 'granted')", [orgId]);
});
afterAll(async () => {
  await Promise.all([smtp?.close(), crm?.close(), target?.close()]);
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });

async function testRun(script: unknown, sendTo: string | null = null, body: Record<string, unknown> = {}) {
  const input = { id: `t${++n}`, email: "maya@example.com", name: "Maya", ...body };
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "story",
    rawBody: JSON.stringify(input),
    body: input,
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
    test: { by: "user:sam@acme.test", script: testScript.parse(script), sendTo },
  });
  return runId;
}

/** Runs the run's ready steps one after another on this process's worker until none is ready. */
async function drive(runId: string, max = 10) {
  for (let i = 0; i < max; i++) {
    const ready = await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready' ORDER BY created_at", [runId]);
    if (ready.length === 0) return;
    for (const s of ready) await runner().run(s.id);
    // A walk the worker left to the engine: the engine's pass is not running here, so walk what is settled.
    const { advanceRun } = await import("../src/run/engine/advance");
    await advanceRun(t.db, graphs, { orgId, runId, reason: "step_settled" }, "test").catch(() => {});
  }
}

const contactRow = async () => (await rows("SELECT email, time_zone, consent, updated_at FROM contacts WHERE org_id = $1 AND email = 'maya@example.com'", [orgId]))[0];

describe("a test run's effects", () => {
  it("are recorded exactly and reach nobody: no email, no CRM write, no HTTP call; the contact is unchanged", async () => {
    const before = await contactRow();
    const runId = await testRun({ calls: { call: { status: 200, body: { accepted: true } } } });
    await drive(runId);
    const steps = await rows("SELECT node_id, status, output FROM steps WHERE run_id = $1 ORDER BY created_at", [runId]);
    expect(steps.map((s) => [s.node_id, s.status])).toEqual([
      ["call", "done"],
      ["send", "done"],
      ["sync", "done"],
    ]);
    const [call, send, sync] = steps.map((s) => s.output);
    expect(call).toMatchObject({ status: 200, body: { accepted: true }, testRun: true, request: { method: "POST", url: `${target.url}/hook`, body: { lead: "x" } } });
    expect(call.request.headers.Authorization).toBe("•••• (hidden)");
    expect(JSON.stringify(call)).not.toContain("abc-secret");
    expect(send).toMatchObject({ simulated: true, from: "Acme <hello@acme.test>", to: "maya@example.com", subject: "Hello Maya", text: "Hi Maya, see https://shop.example.com/offer", testRun: true });
    expect(send.headers).toMatchObject({ Subject: "Hello Maya", To: "maya@example.com", "X-Holdfast-Run-ID": runId });
    expect(send.messageId).toMatch(/^<hf\.[0-9a-f]{40}@acme\.test>$/);
    expect(sync).toMatchObject({ testRun: true, request: { method: "PUT", url: `${crm.baseUrl}/objects/contact/records/maya%40example.com`, body: { fields: { email: "maya@example.com", stage: "emailed" } } } });
    expect(sync.request.headers.Authorization).toBe("•••• (hidden)");
    expect(JSON.stringify(sync)).not.toContain("crm-token");
    // Nothing reached any server, and Maya's record is as it was.
    expect(smtp.received).toHaveLength(0);
    expect(crm.upserts.size).toBe(0);
    expect(target.calls.size).toBe(0);
    expect(await contactRow()).toEqual(before);
    const [run] = await rows("SELECT status, test FROM runs WHERE id = $1", [runId]);
    expect(run).toEqual({ status: "completed", test: true });
  });

  it("a simulated CRM 500 takes the retry path, and the step's error says it was simulated; the CRM is never called", async () => {
    const runId = await testRun({ calls: { sync: { status: 500, body: { error: "down" } } } });
    await drive(runId, 3);
    const [sync] = await rows("SELECT status, attempt, error FROM steps WHERE run_id = $1 AND node_id = 'sync'", [runId]);
    expect(sync.attempt).toBeGreaterThanOrEqual(1);
    expect(["ready", "failed"]).toContain(sync.status);
    expect(sync.error).toMatchObject({ code: "http_500", simulated: true });
    expect(sync.error.message).toMatch(/^Simulated answer \(test run\): PUT .* answered 500/);
    expect(crm.upserts.size).toBe(0);
    // A simulated failure is not real traffic: the connection's breaker saw nothing.
    const [conn] = await rows("SELECT breaker_state, status FROM connections WHERE org_id = $1 AND name = 'crm'", [orgId]);
    expect(conn).toMatchObject({ breaker_state: "closed", status: "ok" });
  });

  it("a simulated 401 does not mark the real connection for reconnecting", async () => {
    const runId = await testRun({ calls: { call: { status: 401 } } });
    await drive(runId, 2);
    const [call] = await rows("SELECT status, error FROM steps WHERE run_id = $1 AND node_id = 'call'", [runId]);
    expect(call.status).toBe("failed");
    expect(call.error).toMatchObject({ code: "http_401", simulated: true });
    expect(target.calls.size).toBe(0);
  });

  it('"Send to me" sends exactly one message, to the tester, marked [Test]; none to the contact', async () => {
    const runId = await testRun({}, "sam@acme.test");
    // With a public address set a real send carries a one-click unsubscribe link; a test run's message never does,
    // so the tester's copy cannot suppress the contact.
    process.env.HOLDFAST_PUBLIC_URL = "https://holdfast.example.com";
    process.env.INBOUND_EMAIL_DOMAIN = "in.acme.test";
    try {
      await drive(runId);
    } finally {
      delete process.env.HOLDFAST_PUBLIC_URL;
      delete process.env.INBOUND_EMAIL_DOMAIN;
    }
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]?.to).toEqual(["sam@acme.test"]);
    expect(smtp.received[0]?.subject).toBe("[Test] Hello Maya");
    expect(smtp.received[0]?.raw).not.toMatch(/List-Unsubscribe/i);
    // Nor tracked links, an unsubscribe footer or a bounce address: the tester sees the original links (issue 43).
    expect(smtp.received[0]?.raw).toContain("https://shop.example.com/offer");
    expect(smtp.received[0]?.raw).not.toMatch(/api\/email\/click|unsubscribe/i);
    expect(smtp.received[0]?.mailFrom).not.toMatch(/^bounce\+/);
    expect(await rows("SELECT count(*)::int AS n FROM email_messages WHERE run_id = $1", [runId])).toEqual([{ n: 0 }]);
    const [send] = await rows("SELECT output FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    expect(send.output).toMatchObject({ simulated: true, to: "maya@example.com", sentToTester: { to: "sam@acme.test" } });
    expect(crm.upserts.size).toBe(0);
    expect(target.calls.size).toBe(0);
  });

  it("a sample naming no stored contact writes none: the sample's address stands in for the templates", async () => {
    const count = async () => Number((await rows("SELECT count(*) FROM contacts WHERE org_id = $1", [orgId]))[0].count);
    const before = await count();
    const runId = await testRun({}, null, { email: "new.lead@example.com", name: "Lee" });
    await drive(runId);
    expect(await count()).toBe(before);
    const [send] = await rows("SELECT output FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
    expect(send.output).toMatchObject({ to: "new.lead@example.com", subject: "Hello Lee" });
  });
});
