import { demoGraph, ensurePublished } from "@holdfast/cli/seed";
import { triggerSettings } from "@holdfast/core/versions";
import { upsertMember } from "@holdfast/core/people";
import { freePort, sessionCookieFor, startTestDeployment, type TestDeployment, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The product as a user runs it: the built Next.js server, the relay, the engine, an io lane worker and the
 * sweeper, all real processes on this file's own database and Redis prefix.
 */
let d: TestDeployment;
let base = "";
/** The demo trigger's URL with its token (url_token mode, as `pnpm start` seeds it). */
let hookUrl = "";
/** The run 200 deliveries of one webhook-id started (its page shows the repeats). */
let burstRun = "";

beforeAll(async () => {
  d = await startTestDeployment();
  // The demo automation calls the web app's own echo route: publish it once the port is known.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  await ensurePublished(d.t.db, {
    orgSlug: "demo",
    orgName: "Demo",
    automationSlug: "demo-follow-up",
    automationName: "Demo follow-up",
    graph: demoGraph(`${base}/api/demo/echo`),
    triggerAuth: "url_token",
  });
  const demo = await d.t.db.automation.findFirstOrThrow({ where: { slug: "demo-follow-up" } });
  hookUrl = `${base}/api/hooks/demo/demo-follow-up/${(await triggerSettings(d.t.db, demo.orgId, demo.id, "url_token")).urlToken}`;
  await d.startWeb({ PORT: String(port), HOLDFAST_DEMO_ECHO: "1" }, port);
  await d.startApps([{ app: "relay", env: { RELAY_POLL_MS: "500" } }, "engine", { app: "lane-worker", env: { LANE: "io" } }, "sweeper"]);
});

afterAll(async () => d?.stop());

const hook = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(hookUrl, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

const statusOf = async (runId: string) => (await d.t.sql.query("SELECT status FROM runs WHERE id = $1", [runId])).rows[0]?.status;

describe("the webhook, end to end", () => {
  it("200 concurrent deliveries of one webhook-id start one run, and every response names it", async () => {
    const responses = await Promise.all(
      Array.from({ length: 200 }, () => hook({ id: "evt_burst", plan: "free" }, { "webhook-id": "msg_burst" })),
    );
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as { runId: string; duplicate: boolean }[];
    const ids = new Set(bodies.map((b) => b.runId));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.status === 202)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(199);
    expect(bodies.filter((b) => !b.duplicate)).toHaveLength(1);
    const { rows } = await d.t.sql.query("SELECT count(*)::int AS n FROM runs WHERE start_key LIKE '%msg_burst'");
    expect(rows[0].n).toBe(1);
    const [runId] = [...ids] as [string];
    burstRun = runId;
    // One start and one first walk (the outbox row it wrote may already be sent and pruned by the relay).
    const events = await d.t.sql.query(
      "SELECT type, count(*)::int AS n FROM run_events WHERE run_id = $1 AND type IN ('run.started', 'run.walk_started', 'run.duplicate_start') GROUP BY type ORDER BY type",
      [runId],
    );
    // The 199 repeats are counted on the run; only the first 3 are timeline rows.
    expect(events.rows).toEqual([
      { type: "run.duplicate_start", n: 3 },
      { type: "run.started", n: 1 },
      { type: "run.walk_started", n: 1 },
    ]);
    expect((await d.t.sql.query("SELECT duplicate_deliveries AS n FROM runs WHERE id = $1", [runId])).rows).toEqual([{ n: 199 }]);
  });

  it("a demo run goes from webhook to completed through a real HTTP step, and shows on the runs pages", async () => {
    const timings: number[] = [];
    let lastRun = "";
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      const res = await hook({ id: `evt_demo_${i}`, plan: "pro", email: "maya@example.com" });
      expect(res.status).toBe(202);
      const { runId } = (await res.json()) as { runId: string };
      await waitFor(async () => (await statusOf(runId)) === "completed", 30_000, `run ${runId} to complete`);
      timings.push(performance.now() - started);
      lastRun = runId;
    }
    const { rows } = await d.t.sql.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM finished_at - created_at) * 1000) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM finished_at - created_at) * 1000) AS p95
       FROM runs WHERE start_key LIKE '%evt_demo_%'`,
    );
    timings.sort((a, b) => a - b);
    console.log(
      `demo webhook -> completed over 20 runs: database (created_at -> finished_at) p50 ${Number(rows[0].p50).toFixed(1)} ms, ` +
        `p95 ${Number(rows[0].p95).toFixed(1)} ms; client-observed (100 ms polling) p50 ${timings[10]?.toFixed(0)} ms`,
    );
    const step = (await d.t.sql.query("SELECT status, attempt, output FROM steps WHERE run_id = $1", [lastRun])).rows[0];
    expect(step).toMatchObject({ status: "done", attempt: 1, output: { status: 200, body: { idempotencyKey: `${lastRun}/notify_crm/1` } } });
    // The pages need a signed-in member of the run's organisation; anyone else is sent to sign in, or finds nothing.
    const anonymous = await fetch(`${base}/runs/${lastRun}`, { redirect: "manual" });
    expect(anonymous.status).toBe(307);
    expect(anonymous.headers.get("location")).toMatch(/\/signin\?next=/);
    const [demo] = (await d.t.sql.query("SELECT id FROM organisations WHERE slug = 'demo'")).rows;
    await upsertMember(d.t.db, { orgId: demo.id, email: "ops@demo.test", name: "Ops", password: "a long enough password", role: "viewer" });
    const [other] = (await d.t.sql.query("INSERT INTO organisations (slug, name) VALUES ('other', 'Other') RETURNING id")).rows;
    await upsertMember(d.t.db, { orgId: other.id, email: "stranger@other.test", name: "Stranger", password: "a long enough password", role: "owner" });
    const member = await sessionCookieFor(d.t.db, "ops@demo.test", "a long enough password");
    const list = await (await fetch(`${base}/`, { headers: { cookie: member } })).text();
    expect(list).toContain(lastRun);
    const page = await (await fetch(`${base}/runs/${lastRun}`, { headers: { cookie: member } })).text();
    expect(page).toContain("run.completed");
    expect(page).toContain("notify_crm");
    expect(page).not.toContain("Cancel run"); // a viewer sees, and cannot act
    // The burst's run says how often its event came, from the run's count (its timeline keeps only 3 repeats).
    const burst = await (await fetch(`${base}/runs/${burstRun}`, { headers: { cookie: member } })).text();
    expect(burst).toContain("The trigger delivered this event 200 times; the 199 repeats started nothing new.");
    const stranger = await sessionCookieFor(d.t.db, "stranger@other.test", "a long enough password");
    expect((await fetch(`${base}/runs/${lastRun}`, { headers: { cookie: stranger } })).status).toBe(404);
    expect(await (await fetch(`${base}/`, { headers: { cookie: stranger } })).text()).not.toContain(lastRun);
  });

  it("refuses bad input with clear JSON errors and writes nothing", async () => {
    const before = (await d.t.sql.query("SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM run_events) AS n")).rows[0].n;
    const bad = await fetch(hookUrl, { method: "POST", body: "{nope", headers: { "webhook-id": "x1" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "invalid_json" } });
    expect((await hook({ plan: "pro" }, { "webhook-id": "x2" }).then((r) => r)).status).toBe(202);
    const unknown = await fetch(`${base}/api/hooks/nobody/demo-follow-up`, { method: "POST", body: "{}", headers: { "webhook-id": "x3" } });
    expect(unknown.status).toBe(404);
    const big = await hook({ pad: "x".repeat(300_000) }, { "webhook-id": "x4" });
    expect(big.status).toBe(413);
    const after = (await d.t.sql.query("SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM run_events) AS n")).rows[0].n;
    // Only the one valid delivery wrote: its run and its run.started event (walk events may follow).
    expect(Number(after) - Number(before)).toBeGreaterThanOrEqual(2);
    const refused = await d.t.sql.query("SELECT count(*)::int AS n FROM runs WHERE start_key ~ ':wh:x[134]$'");
    expect(refused.rows[0].n).toBe(0);
  });
});
