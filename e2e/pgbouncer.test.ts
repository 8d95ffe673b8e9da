import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signPayload } from "@holdfast/core/run";
import { triggerSettings } from "@holdfast/core/versions";
import { type HttpTarget, httpChainGraph, productProcesses, publish, startHttpTarget, startTestDeployment, type TestDeployment, waitFor } from "@holdfast/testkit";
import { type PgBouncerHandle, startPgBouncer } from "@holdfast/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A deployment whose web (WEB_DATABASE_URL) and lane worker (DATABASE_URL) go through PgBouncer in transaction mode
 * (DATABASE_POOL_MODE=transaction; the lane worker's LISTEN on DATABASE_DIRECT_URL), with the relay, engine and
 * sweeper direct, as docs/operations.md "Through PgBouncer" says. 200 signed webhooks each run a two-call automation
 * to its end exactly once, while PostgreSQL sees no more server connections from the pooled processes than
 * PgBouncer's pool (4 per database and role), however many client connections they open to PgBouncer.
 */
const runs = 200;
const poolSize = 4;
let d: TestDeployment;
let bouncer: PgBouncerHandle;
let target: HttpTarget;
let dir: string;
let secret = "";

beforeAll(async () => {
  d = await startTestDeployment();
  target = await startHttpTarget();
  const flow = await publish(d.t.db, httpChainGraph(target.url, 2), { automation: "flow" });
  secret = (await triggerSettings(d.t.db, flow.orgId, flow.automationId, "signed")).signingSecret;
  dir = mkdtempSync(join(tmpdir(), "hf-e2e-pgb-"));
  bouncer = await startPgBouncer(dir, { upstreamHost: "127.0.0.1", upstreamPort: 5432, poolMode: "transaction", defaultPoolSize: poolSize });
  const pooled = { DATABASE_POOL_MODE: "transaction", DATABASE_DIRECT_URL: d.t.url };
  await d.startWeb({ ...pooled, WEB_DATABASE_URL: bouncer.url(d.t.name, "holdfast_web"), DATABASE_URL: bouncer.url(d.t.name, "holdfast_worker") });
  const io = { ...pooled, DATABASE_URL: bouncer.url(d.t.name, "holdfast_worker"), LANE_CONCURRENCY: "16" };
  await d.startApps(productProcesses({ io }, { sweeper: false }), 150_000);
}, 240_000);

afterAll(async () => {
  await d?.stop();
  await target?.close();
  await bouncer?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Server connections PgBouncer holds for this database (SHOW SERVERS), and the backends PostgreSQL has for them. */
async function pooledConnections(): Promise<{ servers: number; backends: number; clients: number }> {
  const servers = (await bouncer.admin<{ database: string; local_port: number }>("SHOW SERVERS")).filter((s) => s.database === d.t.name);
  const clients = (await bouncer.admin<{ database: string }>("SHOW CLIENTS")).filter((c) => c.database === d.t.name).length;
  const ports = servers.map((s) => Number(s.local_port));
  const [row] = await d.q("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND client_port = ANY($2::int[])", [d.t.name, ports]);
  return { servers: servers.length, backends: row.n as number, clients };
}

function hook(n: number): Promise<Response> {
  const raw = JSON.stringify({ id: `evt_${n}`, email: `p${n}@example.com` });
  const id = `msg_${n}`;
  const at = Math.floor(Date.now() / 1000);
  return fetch(`${d.web.base}/api/hooks/acme/flow`, {
    method: "POST",
    headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signPayload(secret, id, at, raw) },
    body: raw,
  });
}

describe("the web and the lane workers through PgBouncer in transaction mode", () => {
  it("runs 200 signed webhooks' automations to their end exactly once within PgBouncer's pool", async () => {
    const peak = { servers: 0, backends: 0, clients: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const now = await pooledConnections();
        for (const k of ["servers", "backends", "clients"] as const) peak[k] = Math.max(peak[k], now[k]);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const started = Date.now();
    const statuses: number[] = [];
    // 20 senders at once, as a busy integration would.
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < runs) statuses.push((await hook(next++)).status);
      }),
    );
    expect(statuses.filter((s) => s === 202).length, JSON.stringify(statuses.filter((s) => s !== 202))).toBe(runs);
    await waitFor(async () => (await d.q("SELECT count(*)::int AS n FROM runs WHERE status = 'completed'"))[0].n === runs, 45_000, "every run to complete");
    const elapsedMs = Date.now() - started;
    sampling = false;
    await sampler;

    const [counts] = await d.q("SELECT count(*)::int AS runs, count(DISTINCT start_key)::int AS keys FROM runs");
    expect(counts).toEqual({ runs, keys: runs });
    // Each run's two calls acted once each (the target counts calls per Idempotency-Key).
    expect(target.effects()).toBe(runs * 2);
    expect([...target.calls.values()].every((c) => c === 1)).toBe(true);
    // Two pools (holdfast_web, holdfast_worker) of `poolSize` server connections each: never more on PostgreSQL.
    expect(peak.servers).toBeGreaterThan(0);
    expect(peak.servers).toBeLessThanOrEqual(2 * poolSize);
    expect(peak.backends).toBeLessThanOrEqual(2 * poolSize);
    const [web] = await d.q("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND usename = 'holdfast_web'", [d.t.name]);
    expect(web.n).toBeLessThanOrEqual(poolSize);
    // The measure for docs/scaling.md: client connections the pooled processes opened (what PostgreSQL would have
    // had without PgBouncer) against the server connections it used.
    console.log(`pgbouncer e2e: ${runs} runs in ${elapsedMs} ms; peak client connections to PgBouncer ${peak.clients}, peak server connections ${peak.servers} (backends seen ${peak.backends})`);
    // No process complained: no named statement clashed, no scope was missing.
    for (const text of [d.web.log(), d.app("lane-worker").output()]) expect(text).not.toMatch(/prepared statement|does not exist|permission denied|row-level security/i);
  }, 120_000);
});
