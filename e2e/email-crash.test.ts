import { createConnection, parseGraph, startRun } from "@holdfast/core";
import {
  type AppProcess,
  createTestDatabase,
  createTestPrefix,
  publish,
  type SmtpTarget,
  spawnApp,
  startSmtpTarget,
  type TestDatabase,
  testRedisUrl,
  waitFor,
} from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * send_email through real processes and a real SMTP server, with the lane worker SIGKILLed after the server accepted
 * the message and before the settle (HOLDFAST_CRASH_CYCLES times; `pnpm test:crash` runs more). A server that drops a
 * repeated Message-ID receives exactly one message per effect key; one that cannot deduplicate gets at most one and
 * the uncertain effects wait for a person (needs_review).
 */
const cycles = Number(process.env.HOLDFAST_CRASH_CYCLES ?? 3);

let t: TestDatabase;
const prefixes: { clear(): Promise<void> }[] = [];
const servers: SmtpTarget[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(prefixes.map((p) => p.clear()));
  await t?.drop();
});

const env = (prefix: string): Record<string, string> => ({
  DATABASE_URL: t.url,
  REDIS_URL: testRedisUrl,
  QUEUE_PREFIX: prefix,
  DB_POOL_SIZE: "4",
  RELAY_POLL_MS: "200",
  SWEEP_INTERVAL_MS: "300",
  SWEEP_STALE_SECONDS: "2",
  LEADER_LEASE_MS: "3000",
  LANE: "io",
  LANE_LEASE_MS: "2000",
  SHUTDOWN_GRACE_MS: "2000",
});

async function crashScenario(name: string, dedupe: boolean) {
  const smtp = await startSmtpTarget({ dedupeMessageId: dedupe });
  servers.push(smtp);
  const seeded = await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "send", kind: "send_email", config: { connection: name, subject: "Hi {{input.n}}", text: "Hello" } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "send" },
        { from: "send", to: "e" },
      ],
    }),
    { automation: name },
  );
  const config = { host: "127.0.0.1", port: smtp.port, tls: "none", from: "hello@acme.test", dedupesMessageId: dedupe };
  await createConnection(t.db, { orgId: seeded.orgId, kind: "smtp", name, config, secret: null });
  const prefix = createTestPrefix();
  prefixes.push(prefix);
  const apps: AppProcess[] = [
    spawnApp("relay", { env: env(prefix.prefix), restart: true }),
    spawnApp("engine", { env: env(prefix.prefix), restart: true }),
    spawnApp("sweeper", { env: env(prefix.prefix), restart: true }),
    spawnApp("lane-worker", { env: env(prefix.prefix), crash: { point: "worker.before_settle", cycles } }),
  ];
  const worker = apps[3] as AppProcess;
  const runIds: string[] = [];
  try {
    await waitFor(
      async () => {
        const n = runIds.length;
        const { runId } = await startRun(t.db, {
          orgSlug: "acme",
          automationSlug: name,
          rawBody: "{}",
          body: { id: `${name}-${n}`, n, email: `p${n}@example.com` },
          headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
          via: "crash-test",
        });
        runIds.push(runId);
        await new Promise((r) => setTimeout(r, 250));
        return worker.kills() >= cycles;
      },
      60_000 + cycles * 4_000,
      `${cycles} kills`,
    );
    await waitFor(
      async () => (await t.sql.query("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status <> 'running'", [runIds])).rows[0].n === runIds.length,
      90_000,
      "every run to finish",
    );
    const { rows } = await t.sql.query("SELECT r.id, r.status, e.status AS effect FROM runs r JOIN effects e ON e.run_id = r.id WHERE r.id = ANY($1)", [runIds]);
    const perKey = smtp.byKey();
    return { rows, perKey, runIds, kills: worker.kills() };
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
  }
}

describe("send_email, worker killed after the SMTP server accepted the message", () => {
  it(`a server that drops a repeated Message-ID: every run completes and each key is delivered exactly once (${cycles} kills)`, async () => {
    const { rows, perKey, runIds, kills } = await crashScenario("dedupe-mailbox", true);
    expect(kills).toBe(cycles);
    expect(rows).toHaveLength(runIds.length);
    for (const r of rows) expect(r).toMatchObject({ status: "completed", effect: "settled" });
    for (const runId of runIds) expect(perKey.get(`${runId}/send/1`)).toBe(1);
    console.log(`dedupe SMTP: ${runIds.length} runs, ${kills} kills, ${perKey.size} keys, each delivered once`);
  });

  it(`a server that cannot deduplicate: nothing is delivered twice; the uncertain sends are needs_review (${cycles} kills)`, async () => {
    const { rows, perKey, runIds, kills } = await crashScenario("plain-mailbox", false);
    expect(kills).toBe(cycles);
    const parked = rows.filter((r) => r.effect === "needs_review");
    expect(parked.length).toBeGreaterThanOrEqual(cycles);
    for (const r of parked) expect(r.status).toBe("failed");
    for (const r of rows.filter((x) => x.effect !== "needs_review")) expect(r).toMatchObject({ status: "completed", effect: "settled" });
    for (const runId of runIds) expect(perKey.get(`${runId}/send/1`) ?? 0).toBeLessThanOrEqual(1);
    console.log(`plain SMTP: ${runIds.length} runs, ${kills} kills, ${parked.length} needs_review, none delivered twice`);
  });
});
