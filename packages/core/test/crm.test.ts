import { type CrmTarget, createTestDatabase, publish, startCrmTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection, reconnectConnection } from "../src/providers/connections/connect";
import { createLogger } from "../src/base/log";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let crm: CrmTarget;
let orgId: string;
let connectionId: string;
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  crm = await startCrmTarget(["token-1"]);
  const seeded = await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "sync", kind: "crm_upsert", config: { connection: "crm", object: "leads", fields: { email: "{{contact.email}}", plan: "{{input.plan}}" } } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "sync" },
        { from: "sync", to: "e" },
      ],
    }),
    { automation: "crm" },
  );
  orgId = seeded.orgId;
  await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "sync", kind: "crm_upsert", config: { connection: "crm", object: "accounts", matchKey: "{{input.customer_id}}", fields: { plan: "{{input.plan}}" } } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "sync" },
        { from: "sync", to: "e" },
      ],
    }),
    { automation: "crm-by-id" },
  );
  connectionId = await createConnection(t.db, { orgId, kind: "crm", name: "crm", config: { baseUrl: crm.baseUrl }, secret: "token-1" });
});
afterAll(async () => {
  await crm?.close();
  await t?.drop();
});

const runner = (worker = "w") => new StepRunner({ db: t.db, graphs, worker, lane: { ...lanes.io, leaseMs: 3_000, heartbeatMs: 1_000 }, log });

async function start(email?: string, plan = "pro") {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "crm",
    rawBody: "{}",
    body: { id: `c${++n}`, email: email ?? `lead${n}@example.com`, plan },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1", [runId]);
  return { runId, stepId: stepId as string, key: `${runId}/sync/1`, email: (email ?? `lead${n}@example.com`).toLowerCase() };
}

describe("crm_upsert", () => {
  it("names the record by its match key (default: the contact's email): two runs for the same person update one record", async () => {
    const first = await start("maya@example.com", "free");
    const second = await start("Maya@Example.com", "pro");
    expect((await runner().run(first.stepId)).kind).toBe("settled");
    expect((await runner().run(second.stepId)).kind).toBe("settled");
    const theirs = [...crm.records.values()].filter((r) => r.fields.email === "maya@example.com");
    expect(theirs).toHaveLength(1);
    expect(crm.records.get("maya@example.com")).toMatchObject({ externalId: "maya@example.com", fields: { plan: "pro" }, version: 2 });
    // Each call still carried its own effect key as the idempotency key.
    expect(crm.writes.get(first.key)).toBe("maya@example.com");
    expect(crm.writes.get(second.key)).toBe("maya@example.com");
  });

  it("matches by an id from the payload when configured; a run with no value to match by fails in plain words, calling nothing", async () => {
    const byId = async (body: Record<string, unknown>) => {
      const { runId } = await startRun(t.db, {
        orgSlug: "acme",
        automationSlug: "crm-by-id",
        rawBody: "{}",
        body: { id: `acct${++n}`, ...body },
        headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
        via: "test",
        auth: { kind: "operator" },
      });
      const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1", [runId]);
      return runner().run(id as string);
    };
    expect((await byId({ customer_id: "cus_7", plan: "free", email: "a@example.com" })).kind).toBe("settled");
    expect((await byId({ customer_id: "cus_7", plan: "pro", email: "b@example.com" })).kind).toBe("settled");
    expect(crm.records.get("cus_7")).toMatchObject({ fields: { plan: "pro" }, version: 2 });
    expect((await byId({ customer_id: "  ", plan: "pro" })).kind).toBe("failed");
    const [failed] = await rows("SELECT error FROM steps WHERE run_id IN (SELECT id FROM runs WHERE start_key LIKE $1) AND status = 'failed'", [`%acct${n}`]);
    expect(failed.error).toMatchObject({ code: "no_match_key", message: expect.stringMatching(/^"Match records by" \(\{\{input.customer_id\}\}\) is empty for this run/) });

    // The default matches by the contact's email: a run without a contact says so, and the CRM hears nothing.
    const calls = [...crm.upserts.values()].reduce((a, b) => a + b, 0);
    const { runId } = await startRun(t.db, {
      orgSlug: "acme",
      automationSlug: "crm",
      rawBody: "{}",
      body: { id: `c${++n}`, plan: "pro" },
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
    });
    const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1", [runId]);
    expect((await runner().run(stepId)).kind).toBe("failed");
    expect((await rows("SELECT error FROM steps WHERE id = $1", [stepId]))[0].error).toMatchObject({
      code: "no_match_key",
      message: expect.stringContaining('this run has no contact, so no leads record can be matched by {{contact.email}}: set "Match records by"'),
    });
    expect([...crm.upserts.values()].reduce((a, b) => a + b, 0)).toBe(calls);
  });

  it("a call repeated with the same idempotency key is answered by the CRM, not applied twice", async () => {
    const { stepId, key, email } = await start();
    expect((await runner().run(stepId)).kind).toBe("settled");
    const again = await fetch(`${crm.baseUrl}/objects/leads/records/${encodeURIComponent(email)}`, {
      method: "PUT",
      headers: { authorization: "Bearer token-1", "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ externalId: email, fields: { plan: "changed" } }),
    });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(crm.records.get(email)).toMatchObject({ fields: { plan: "pro" }, version: 1 });
  });

  it("upserts the contact's record with the effect key as the idempotency key; a repeat of the step replays without a call", async () => {
    const { runId, stepId, key, email } = await start();
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(crm.records.get(email)).toMatchObject({ externalId: email, fields: { email, plan: "pro" }, version: 1 });
    expect(crm.writes.get(key)).toBe(email);
    expect(await rows("SELECT output FROM steps WHERE id = $1", [stepId])).toEqual([{ output: expect.objectContaining({ externalId: email }) }]);
    await t.sql.query("UPDATE steps SET status = 'ready', advanced_at = NULL WHERE id = $1", [stepId]);
    await t.sql.query("UPDATE runs SET status = 'running', finished_at = NULL WHERE id = $1", [runId]);
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(crm.upserts.get(key)).toBe(1);
  });

  it("an uncertain upsert is reconciled by searching for its key: settled from the CRM's record, no second call", async () => {
    const { runId, stepId, key, email } = await start();
    // A first attempt's call reached the CRM, then its worker died before recording anything.
    await fetch(`${crm.baseUrl}/objects/leads/records/${encodeURIComponent(email)}`, {
      method: "PUT",
      headers: { authorization: "Bearer token-1", "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ fields: { email } }),
    });
    await t.sql.query(
      `INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until)
       VALUES ($1, $2, $3, $4, 'crm_upsert', 'in_flight', 'dead:1', now() - interval '1 second')`,
      [orgId, runId, stepId, key],
    );
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(crm.upserts.get(key)).toBe(1);
    expect(await rows("SELECT status, result->>'externalId' AS ext FROM effects WHERE key = $1", [key])).toEqual([{ status: "settled", ext: email }]);
  });

  it("a 429 with Retry-After: 7 is retried no earlier than 7 s later", async () => {
    const { stepId } = await start();
    crm.behave({ failFirst: 1, failStatus: 429, retryAfter: "7" });
    try {
      expect((await runner().run(stepId)).kind).toBe("retry_scheduled");
      const [{ wait }] = await rows("SELECT EXTRACT(EPOCH FROM available_at - now())::float8 AS wait FROM steps WHERE id = $1", [stepId]);
      expect(wait).toBeGreaterThan(6.5);
      expect(wait).toBeLessThanOrEqual(7);
    } finally {
      crm.behave({ failFirst: 0 });
    }
  });

  it("two workers handed the same steps at once never call the CRM twice for one key", async () => {
    crm.behave({ delayMs: 150 });
    try {
      const steps = await Promise.all(Array.from({ length: 20 }, () => start()));
      const a = runner("worker-a");
      const b = runner("worker-b");
      await Promise.all(steps.flatMap((s) => [a.run(s.stepId), b.run(s.stepId)]));
      for (const s of steps) expect(crm.upserts.get(s.key)).toBe(1);
      expect(await rows("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1) AND status = 'done'", [steps.map((s) => s.stepId)])).toEqual([{ n: 20 }]);
    } finally {
      crm.behave({ delayMs: 0 });
    }
  });

  it("a revoked token parks the step; reconnecting resumes it and the record is written once", async () => {
    crm.setTokens(["token-2"]);
    const { stepId, key, email } = await start();
    expect((await runner().run(stepId)).kind).toBe("parked");
    expect(await rows("SELECT status FROM connections WHERE id = $1", [connectionId])).toEqual([{ status: "needs_reconnect" }]);
    expect(crm.records.has(email)).toBe(false);
    expect(await reconnectConnection(t.db, orgId, connectionId, "token-2", "test")).toBe(1);
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(crm.records.get(email)?.version).toBe(1);
    expect(crm.writes.get(key)).toBe(email);
  });
});
