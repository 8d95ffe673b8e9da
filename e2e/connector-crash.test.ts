import { parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { startRun } from "@holdfast/core/run";
import {
  type AppProcess,
  appEnv,
  type CrmTarget,
  createTestDatabase,
  createTestPrefix,
  type HttpTarget,
  publish,
  type SmtpTarget,
  spawnApp,
  startCrmTarget,
  startHttpTarget,
  startSmtpTarget,
  startUntilKilled,
  type TestDatabase,
  waitFor,
} from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Every connector through real processes and a real local provider, with the lane worker SIGKILLed at three places:
 * after its claim (before the call), during the provider call (the provider is slow to answer), and after the call
 * returned but before the settle. HOLDFAST_CRASH_CYCLES kills per scenario (3 in CI; `pnpm test:crash` runs 100).
 * Providers that deduplicate (HTTP with Idempotency-Key, SMTP dropping a repeated Message-ID, CRM upsert by external
 * id) act exactly once per effect key and every run completes; plain SMTP never delivers twice and its uncertain
 * sends wait for a person (needs_review).
 */
const cycles = Number(process.env.HOLDFAST_CRASH_CYCLES ?? 3);
/** Each kill costs a restart (about 2-3 s here) and the backlog it leaves must drain. */
const testTimeout = 120_000 + cycles * 8_000;
const allPoints = ["worker.after_claim", "effect.during_call", "worker.before_settle"] as const;
type Point = (typeof allPoints)[number];
// CRASH_POINTS / CRASH_SCENARIOS (comma-separated) narrow a long run to some of them.
const points = allPoints.filter((p) => !process.env.CRASH_POINTS || process.env.CRASH_POINTS.split(",").includes(p));

let t: TestDatabase;
let orgId = "";
let http: HttpTarget;
let dedupeSmtp: SmtpTarget;
let plainSmtp: SmtpTarget;
let crm: CrmTarget;
const prefixes: { clear(): Promise<void> }[] = [];
const report: Record<string, unknown> = {};

beforeAll(async () => {
  t = await createTestDatabase();
  http = await startHttpTarget();
  http.behave({ delayMs: 300, delayFirstOnly: false });
  dedupeSmtp = await startSmtpTarget({ dedupeMessageId: true, replyDelayMs: 300 });
  plainSmtp = await startSmtpTarget({ replyDelayMs: 300 });
  crm = await startCrmTarget(["crm-token"]);
  crm.behave({ delayMs: 300 });
  orgId = (await publish(t.db, graphFor("http_request", "noop"), { automation: "seed" })).orgId;
  await createConnection(t.db, { orgId, kind: "smtp", name: "dedupe", config: { host: "127.0.0.1", port: dedupeSmtp.port, tls: "none", from: "a@acme.test", dedupesMessageId: true }, secret: null });
  await createConnection(t.db, { orgId, kind: "smtp", name: "plain", config: { host: "127.0.0.1", port: plainSmtp.port, tls: "none", from: "a@acme.test" }, secret: null });
  await createConnection(t.db, { orgId, kind: "crm", name: "crm", config: { baseUrl: crm.baseUrl }, secret: "crm-token" });
});
afterAll(async () => {
  console.log(`connector crash cycles per scenario: ${cycles}\n${JSON.stringify(report, null, 2)}`);
  await Promise.all([http?.close(), dedupeSmtp?.close(), plainSmtp?.close(), crm?.close()]);
  await Promise.all(prefixes.map((p) => p.clear()));
  await t?.drop();
});

function graphFor(kind: "http_request" | "send_email" | "crm_upsert", connection: string) {
  const config =
    kind === "http_request"
      ? { url: "http://127.0.0.1:9/unused", method: "POST" }
      : kind === "send_email"
        ? { connection, subject: "Hi {{input.n}}", text: "Hello" }
        : { connection, object: "leads", fields: { email: "{{contact.email}}" } };
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      { id: "act", kind, config },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "act" },
      { from: "act", to: "e" },
    ],
  });
}

const env = (prefix: string, point: Point) =>
  appEnv(t.url, prefix, { CONNECTION_PROBE_SECONDS: "0", ...(point === "effect.during_call" ? { HOLDFAST_CRASH_DURING_MS: "150" } : {}) });

interface Scenario {
  name: string;
  kind: "http_request" | "send_email" | "crm_upsert";
  connection: string;
  /** Times the provider acted for a key. */
  acted(key: string): number;
  dedupes: boolean;
}

async function crashRuns(s: Scenario, point: Point) {
  const name = `${s.name}-${point.replace(/[._]/g, "-")}`;
  const graph = graphFor(s.kind, s.connection);
  const act = graph.nodes.find((n) => n.id === "act");
  if (act?.kind === "http_request") act.config.url = http.url;
  await publish(t.db, graph, { automation: name });
  const prefix = createTestPrefix();
  prefixes.push(prefix);
  const apps: AppProcess[] = [
    spawnApp("relay", { env: env(prefix.prefix, point), restart: true }),
    spawnApp("sweeper", { env: env(prefix.prefix, point), restart: true }),
    spawnApp("lane-worker", { env: env(prefix.prefix, point), crash: { point, cycles } }),
  ];
  const worker = apps[2] as AppProcess;
  try {
    const start = async (n: number) =>
      (
        await startRun(t.db, {
          orgSlug: "acme",
          automationSlug: name,
          rawBody: "{}",
          body: { id: `${name}-${n}`, n, email: `p${n}@example.com` },
          headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
          via: "crash-test",
          auth: { kind: "operator" },
        })
      ).runId;
    const runIds = await startUntilKilled(worker, cycles, start, { everyMs: 200, timeoutMs: 60_000 + cycles * 5_000, what: `${cycles} kills at ${point}` });
    await waitFor(
      async () => (await t.sql.query("SELECT count(*)::int AS n FROM runs r WHERE id = ANY($1) AND (status <> 'running' OR EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'parked' AND s.error->>'code' = 'needs_review'))", [runIds])).rows[0].n === runIds.length,
      90_000 + cycles * 1_000,
      "every run to finish",
    );
    const { rows } = await t.sql.query(
      "SELECT r.id, r.status, e.status AS effect FROM runs r LEFT JOIN effects e ON e.run_id = r.id WHERE r.id = ANY($1)",
      [runIds],
    );
    return { rows, runIds, kills: worker.kills() };
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
  }
}

const scenarios: Scenario[] = [
  { name: "http", kind: "http_request", connection: "", acted: (k) => (http.calls.get(k) ? 1 : 0), dedupes: true },
  { name: "email-dedupe", kind: "send_email", connection: "dedupe", acted: (k) => dedupeSmtp.byKey().get(k) ?? 0, dedupes: true },
  // The CRM applies a key once (a repeat is answered from its first write): `writes` holds the keys that wrote.
  { name: "crm", kind: "crm_upsert", connection: "crm", acted: (k) => (crm.writes.has(k) ? 1 : 0), dedupes: true },
  { name: "email-plain", kind: "send_email", connection: "plain", acted: (k) => plainSmtp.byKey().get(k) ?? 0, dedupes: false },
];

const chosen = scenarios.filter((s) => !process.env.CRASH_SCENARIOS || process.env.CRASH_SCENARIOS.split(",").includes(s.name));

describe.each(chosen)("$name: worker killed around the provider call", (s) => {
  it.each(points)(`killed at %s ${cycles} times: the provider acts at most once per key`, async (point) => {
    const { rows, runIds, kills } = await crashRuns(s, point);
    expect(kills).toBe(cycles);
    const keys = runIds.map((r) => `${r}/act/1`);
    const actedTwice = keys.filter((k) => s.acted(k) > 1);
    expect(actedTwice).toEqual([]);
    const review = rows.filter((r) => r.effect === "needs_review");
    if (s.dedupes || point === "worker.after_claim") {
      // Nothing is uncertain where the provider deduplicates or the call never began: every run completes, once.
      expect(review).toEqual([]);
      for (const r of rows) expect(r).toMatchObject({ status: "completed", effect: "settled" });
      for (const k of keys) expect(s.acted(k)).toBe(1);
    } else {
      expect(review.length).toBeGreaterThanOrEqual(1);
      for (const r of review) expect(r.status).toBe("running"); // parked for a person, not failed
      for (const r of rows.filter((x) => x.effect !== "needs_review")) expect(r).toMatchObject({ status: "completed", effect: "settled" });
    }
    report[`${s.name} @ ${point}`] = { runs: runIds.length, kills, needsReview: review.length, actedTwice: actedTwice.length };
  }, testTimeout);
});
