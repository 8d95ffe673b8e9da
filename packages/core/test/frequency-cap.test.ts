import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createLogger } from "../src/base/log";
import { capVerdict, capWords, frequencyCapOf } from "../src/people/sending-rules/frequency-cap";
import { frequencyCapGate } from "../src/people/sending-rules/frequency-cap-gate";
import { createConnection } from "../src/providers/connections/connect";
import { eraseContact } from "../src/run/contacts/erase";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { automationsSetCappedAction, automationsSetTransactional } from "../src/store/sql/automations-cap";
import { contactSendsLockAddress } from "../src/store/sql/contact-sends";
import { sendingRulesSetFrequencyCap } from "../src/store/sql/sending-rules";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let smtp: SmtpTarget;
let orgId: string;
const ids: Record<string, string> = {};
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;

const emailGraph = (connection: string) =>
  parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "send", kind: "send_email", config: { connection, subject: "Hello", text: "Hi" } },
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
  for (const [slug, connection] of [["news", "mailbox"], ["offers", "mailbox"], ["receipts", "mailbox"], ["refused", "badbox"]] as const) {
    const seeded = await publish(t.db, emailGraph(connection), { automation: slug });
    orgId = seeded.orgId;
    ids[slug] = seeded.automationId;
  }
  const config = { host: "127.0.0.1", port: smtp.port, tls: "none", user: "sam", from: "Acme <hello@acme.test>" };
  await createConnection(t.db, { orgId, kind: "smtp", name: "mailbox", config, secret: "right" });
  // The server refuses this login: the send stops before DATA (nothing went out).
  await createConnection(t.db, { orgId, kind: "smtp", name: "badbox", config, secret: "wrong" });
  await automationsSetTransactional(t.db, orgId, ids.receipts as string, true);
  await sendingRulesSetFrequencyCap(t.db, orgId, { count: 1, periodHours: 24 }, "user:owner@acme.test");
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log });

async function start(automation: string, email: string) {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: "{}",
    body: { id: `f${++n}`, email },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  return { runId, stepId: stepId as string, key: `${runId}/send/1` };
}
const sentTo = (address: string) => smtp.received.filter((m) => m.to.includes(address)).length;
const counted = async (address: string) => (await rows("SELECT count(*)::int AS n FROM contact_sends WHERE address = $1 AND released_at IS NULL", [address]))[0].n;

describe("the frequency cap's decision (pure)", () => {
  it("a counted key goes ahead as a retry; under the cap counts; at the cap is capped", () => {
    const cap = { count: 2, periodHours: 24 };
    expect(capVerdict(cap, { thisKey: true, count: 5 })).toBe("retry");
    expect(capVerdict(cap, { thisKey: false, count: 1 })).toBe("count");
    expect(capVerdict(cap, { thisKey: null, count: 2 })).toBe("capped");
    expect(frequencyCapOf({ count: 0, periodHours: 24 })).toBeNull();
    expect(frequencyCapOf({ count: 3, periodHours: 168 })).toEqual({ count: 3, periodHours: 168 });
    const freeing = { sentAt: new Date("2026-12-05T07:01:30Z"), automationName: "News" };
    expect(capWords({ cap: { count: 1, periodHours: 24 }, count: 1, freeing })).toBe(
      'frequency cap: at most 1 email per 24 hours to this address; one went out at 2026-12-05 07:01 UTC from "News"',
    );
    expect(capWords({ cap: { count: 3, periodHours: 168 }, count: 3, freeing })).toContain("at most 3 emails per 7 days");
  });
});

describe("the frequency cap at send time", () => {
  it("a retry of the same effect key counts once", async () => {
    const { runId, stepId, key } = await start("news", "retry@example.com");
    const send = { orgId, runId, stepId, effectKey: key, to: "retry@example.com", test: false };
    expect(await frequencyCapGate(t.db, send)).toBeNull();
    expect(await frequencyCapGate(t.db, send)).toBeNull(); // the same send again (an attempt after a lost answer)
    expect(await counted("retry@example.com")).toBe(1);
    // Through the step runner too: the step's attempt finds its own row and sends once.
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(sentTo("retry@example.com")).toBe(1);
    expect(await counted("retry@example.com")).toBe(1);
  });

  it("a send refused before DATA gives its place back, and the next send to the address goes out", async () => {
    const refused = await start("refused", "refused@example.com");
    await runner().run(refused.stepId);
    const [row] = await rows("SELECT released_at FROM contact_sends WHERE effect_key = $1", [refused.key]);
    expect(row?.released_at).toBeInstanceOf(Date);
    expect(sentTo("refused@example.com")).toBe(0);
    const next = await start("news", "refused@example.com");
    expect((await runner().run(next.stepId)).kind).toBe("settled");
    expect(sentTo("refused@example.com")).toBe(1);
    expect(await counted("refused@example.com")).toBe(1);
  });

  it("a transactional automation is neither capped nor counted", async () => {
    const first = await start("news", "buyer@example.com");
    await runner().run(first.stepId);
    const receipt = await start("receipts", "buyer@example.com");
    expect((await runner().run(receipt.stepId)).kind).toBe("settled");
    expect(sentTo("buyer@example.com")).toBe(2);
    expect(await rows("SELECT 1 FROM contact_sends WHERE effect_key = $1", [receipt.key])).toHaveLength(0);
    // And a marketing send after the receipt is still capped by the first one alone.
    const second = await start("offers", "buyer@example.com");
    expect((await runner().run(second.stepId)).kind).toBe("deferred");
    expect(sentTo("buyer@example.com")).toBe(2);
  });

  it("waits until the oldest counted send + the period, by the database's clock, without using an attempt", async () => {
    const earlier = await start("news", "held@example.com");
    await rows(
      `INSERT INTO contact_sends (org_id, address, effect_key, automation_id, run_id, step_id, sent_at)
       VALUES ($1, 'held@example.com', $2, $3, $4, $5, now() - interval '5 hours 17 minutes')`,
      [orgId, earlier.key, ids.news, earlier.runId, earlier.stepId],
    );
    const capped = await start("offers", "held@example.com");
    expect((await runner().run(capped.stepId)).kind).toBe("deferred");
    expect(sentTo("held@example.com")).toBe(0);
    const [expected] = await rows("SELECT sent_at + interval '24 hours' AS until FROM contact_sends WHERE effect_key = $1", [earlier.key]);
    const [event] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'step.deferred'", [capped.runId]);
    expect(event.data.hold).toMatchObject({ rule: "frequency_cap", until: (expected.until as Date).toISOString(), zone: null, zoneSource: null });
    expect(event.data.hold.words).toMatch(/^frequency cap: at most 1 email per 24 hours to this address; one went out at \d{4}-\d\d-\d\d \d\d:\d\d UTC from "news"$/);
    const [step] = await rows("SELECT status, attempt, deferrals, available_at FROM steps WHERE id = $1", [capped.stepId]);
    expect(step.status).toBe("ready");
    expect(step.attempt - step.deferrals).toBe(0); // no attempt used
    expect(Math.abs((step.available_at as Date).getTime() - (expected.until as Date).getTime())).toBeLessThan(2_000);
    expect(await rows("SELECT 1 FROM contact_sends WHERE effect_key = $1", [capped.key])).toHaveLength(0);
  });

  it("skip: the capped send settles as skipped with the cap and the automation's choice in words", async () => {
    await automationsSetCappedAction(t.db, orgId, ids.offers as string, "skip");
    try {
      const first = await start("news", "skip@example.com");
      await runner().run(first.stepId);
      const capped = await start("offers", "skip@example.com");
      expect((await runner().run(capped.stepId)).kind).toBe("settled");
      const [step] = await rows("SELECT status, output FROM steps WHERE id = $1", [capped.stepId]);
      expect(step.status).toBe("done");
      expect(step.output).toMatchObject({ skipped: true, to: "skip@example.com" });
      expect(step.output.reason).toMatch(/^frequency cap: at most 1 email per 24 hours to this address; one went out at .* from "news"; this automation skips sends over the cap$/);
      expect(sentTo("skip@example.com")).toBe(1);
    } finally {
      await automationsSetCappedAction(t.db, orgId, ids.offers as string, "wait");
    }
  });

  it("two sends at one instant on two connections: both wait on the address's lock, exactly one is counted", async () => {
    const a = await start("news", "barrier@example.com");
    const b = await start("offers", "barrier@example.com");
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The test holds the address's lock, so both sends reach it and queue before either can count.
    const holder = inTx(t.db, async (tx) => {
      await contactSendsLockAddress(tx, orgId, "BARRIER@example.com");
      await gate;
    });
    await new Promise((r) => setTimeout(r, 100));
    const sends = [a, b].map((s) => frequencyCapGate(t.db, { orgId, runId: s.runId, stepId: s.stepId, effectKey: s.key, to: "barrier@example.com", test: false }));
    await expect
      .poll(async () => (await rows("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()"))[0].n, { timeout: 5_000 })
      .toBe(2);
    release();
    await holder;
    const outcomes = await Promise.all(sends);
    expect(outcomes.filter((o) => o === null)).toHaveLength(1);
    expect(outcomes.filter((o) => o?.kind === "defer")).toHaveLength(1);
    expect(await counted("barrier@example.com")).toBe(1);
  });

  it("a test run is neither counted nor capped; erasing the contact deletes its counted sends", async () => {
    const s = await start("news", "gone@example.com");
    await runner().run(s.stepId);
    expect(await counted("gone@example.com")).toBe(1);
    // The editor's test run to the same address, over the cap: built as it would go out, not held, not counted.
    const headers = { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null };
    const body = { id: `f${++n}`, email: "gone@example.com" };
    const test = await startRun(t.db, { orgSlug: "acme", automationSlug: "offers", rawBody: "{}", body, headers, via: "test", auth: { kind: "operator" }, test: { by: "user:sam@acme.test" } });
    const [{ id: testStep }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [test.runId]);
    expect((await runner().run(testStep as string)).kind).toBe("settled");
    const [built] = await rows("SELECT output FROM steps WHERE id = $1", [testStep]);
    expect(built.output).toMatchObject({ simulated: true, to: "gone@example.com" });
    expect(await rows("SELECT 1 FROM contact_sends WHERE run_id = $1", [test.runId])).toHaveLength(0);
    expect(sentTo("gone@example.com")).toBe(1);
    await eraseContact(t.db, graphs, orgId, "Gone@example.com", "test");
    expect(await rows("SELECT 1 FROM contact_sends WHERE address = 'gone@example.com'")).toHaveLength(0);
  });
});
