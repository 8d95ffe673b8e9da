import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signPayload } from "@holdfast/core/run";
import { triggerSettings } from "@holdfast/core/versions";
import {
  type AppProcess,
  appEnv,
  createTestPrefix,
  type HttpTarget,
  httpChainGraph,
  publish,
  spawnApp,
  startHttpTarget,
  startWeb,
  testRedisUrl,
  waitFor,
  type WebServer,
} from "@holdfast/testkit";
import { type ClusterDatabase, createClusterDatabase, ensureClusterPackages, type PgClusterHandle, startPgCluster } from "@holdfast/testkit/cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeliveryStream, refusalSpells, startDeliveryStream } from "./fixtures/delivery-stream";

/**
 * PostgreSQL failover (issue 45): the web, relay, engine, io lane worker and sweeper run on a two-node Patroni cluster
 * (synchronous replication) through HAProxy, which sends every connection to the node Patroni names primary. Signed
 * webhooks keep arriving while the leader's host dies (Patroni and postgres SIGKILLed), while it rejoins, and while
 * the new leader dies in turn. Every delivery answered 2xx has its run, every event has exactly one run, every run
 * completes, and each HTTP call took effect once (the target counts calls per Idempotency-Key). While no primary is
 * reachable deliveries are answered 503 with Retry-After, every process says the database went and came back, none
 * exits, and afterwards runs are dispatched by LISTEN/NOTIFY again (the polls and sweeps are set far slower).
 */
let dir = "";
let cluster: PgClusterHandle | undefined;
let cdb: ClusterDatabase;
let target: HttpTarget;
let web: WebServer | undefined;
let apps: AppProcess[] = [];
let secret = "";
const prefix = createTestPrefix();
/** Slower than a run takes when NOTIFY wakes its dispatchers: a run this quick was not found by a sweep or a poll. */
const sweepStaleSeconds = 10;

beforeAll(async () => {
  const t0 = Date.now();
  const phase = (what: string) => console.log(`[setup] ${what} at ${Date.now() - t0} ms`);
  await ensureClusterPackages();
  dir = mkdtempSync(join(tmpdir(), "hf-pg-failover-"));
  cluster = await startPgCluster(dir, { log: (line) => console.log(`[pg-cluster] ${line}`) });
  phase("cluster up");
  cdb = await createClusterDatabase(cluster, "holdfast_failover");
  phase("database migrated");
  target = await startHttpTarget();
  const published = await publish(cdb.db, httpChainGraph(target.url, 2), { automation: "orders", triggerAuth: "signed" });
  secret = (await triggerSettings(cdb.db, published.orgId, published.automationId, "signed")).signingSecret;
  // Every process through HAProxy (sessions kept). The relay's poll and grace are at their longest and the sweeper's
  // staleness well above a run's length, so a run that completes quickly after a failover was woken by NOTIFY.
  const env = appEnv(cdb.url, prefix.prefix, { SWEEP_STALE_SECONDS: String(sweepStaleSeconds), LOG_LEVEL: "info" });
  apps = [
    spawnApp("relay", { env: { ...env, RELAY_POLL_MS: "60000", RELAY_STEP_READY_GRACE_MS: "60000" } }),
    spawnApp("engine", { env }),
    spawnApp("lane-worker", { env: { ...env, LANE: "io" } }),
    spawnApp("sweeper", { env }),
  ];
  const webStarted = startWeb({ DATABASE_URL: cdb.url, REDIS_URL: testRedisUrl, QUEUE_PREFIX: prefix.prefix, LOG_LEVEL: "info" });
  await Promise.all([webStarted.then((w) => (web = w)), ...apps.map((a) => a.waitForOutput(/ready/, 180_000))]);
  phase("web and processes ready");
}, 300_000);

afterAll(async () => {
  await web?.stop();
  await Promise.all(apps.map((a) => a.stop()));
  await target?.close();
  await cdb?.close();
  await cluster?.stop();
  await prefix.clear();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Deliveries answered 503 and what else was wrong with a refusal (no Retry-After, another status). */
const refusals = { answered503: 0, problems: [] as string[] };

/** The provider's signed POST (Standard Webhooks); a 503 must carry Retry-After. */
async function send(id: string): Promise<{ status: number; runId?: string }> {
  const raw = JSON.stringify({ id });
  const at = Math.floor(Date.now() / 1000);
  const res = await fetch(`${web?.base}/api/hooks/acme/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signPayload(secret, id, at, raw) },
    body: raw,
    signal: AbortSignal.timeout(20_000),
  });
  const body = (await res.json().catch(() => ({}))) as { runId?: string };
  if (res.status === 503) {
    refusals.answered503++;
    if (!res.headers.get("retry-after")) refusals.problems.push(`${id}: 503 without Retry-After`);
  } else if (res.status >= 300) refusals.problems.push(`${id}: answered ${res.status}`);
  return { status: res.status, ...(body.runId ? { runId: body.runId } : {}) };
}

const names = ["web", "relay", "engine", "lane-worker", "sweeper"];
const logs = (): Record<string, string> => ({ web: web?.log() ?? "", ...Object.fromEntries(apps.map((a) => [a.name, a.output()])) });
const mark = () => Object.fromEntries(Object.entries(logs()).map(([n, text]) => [n, text.length]));
/** How many outage lines (`database` `down`/`up`) each process wrote since `marks`. */
function outageLines(marks: Record<string, number>): Record<string, { down: number; up: number }> {
  return Object.fromEntries(
    Object.entries(logs()).map(([n, text]) => {
      const lines = text
        .slice(marks[n] ?? 0)
        .split("\n")
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as { service?: string; outage?: string }];
          } catch {
            return [];
          }
        });
      const count = (o: string) => lines.filter((l) => l.service === "database" && l.outage === o).length;
      return [n, { down: count("down"), up: count("up") }];
    }),
  );
}

/** SIGKILLs the leader while deliveries flow; waits until every process said the database was back. */
async function killLeaderUnderLoad(): Promise<{ node: string; failoverMs: number; lines: Record<string, { down: number; up: number }> }> {
  const marks = mark();
  const killed = await (cluster as PgClusterHandle).killLeader();
  await waitFor(async () => names.every((n) => (outageLines(marks)[n]?.up ?? 0) > 0), 60_000, "every process to say the database is back");
  return { ...killed, lines: outageLines(marks) };
}

describe("the primary's host dies twice while webhooks arrive", () => {
  it("every acknowledged delivery has its run, every run completes once, 503 + Retry-After meanwhile, LISTEN dispatch after", async () => {
    const started = Date.now();
    const stream: DeliveryStream = startDeliveryStream({ send, everyMs: 250, retryMs: 500 });
    await new Promise((r) => setTimeout(r, 3_000));
    const first = await killLeaderUnderLoad();
    await (cluster as PgClusterHandle).restartNode(first.node);
    await new Promise((r) => setTimeout(r, 2_000));
    const second = await killLeaderUnderLoad();
    await new Promise((r) => setTimeout(r, 2_000));
    await stream.finish(60_000);
    const spells = refusalSpells(stream.answers);
    const accepted = [...stream.accepted.entries()];
    console.log(
      `failovers: ${JSON.stringify([first, second].map((k) => ({ node: k.node, failoverMs: k.failoverMs })))}; ` +
        `refusal spells: ${JSON.stringify(spells)}; answered 503: ${refusals.answered503}; deliveries acknowledged: ${accepted.length}; ` +
        `outage lines: ${JSON.stringify({ first: first.lines, second: second.lines })}`,
    );
    // A refusal other than 503 + Retry-After: the web's error lines say why.
    const webErrors = (web?.log() ?? "").split("\n").filter((l) => /"level":50/.test(l)).slice(-5).join("\n");
    expect(refusals.problems, webErrors).toEqual([]);
    // A failover refuses deliveries (503) for a while: the test saw the outage it was meant to see.
    expect(refusals.answered503).toBeGreaterThan(0);
    expect(spells.length).toBeGreaterThanOrEqual(2);
    for (const k of [first, second]) for (const n of names) expect(k.lines[n]?.down, `${n} said the database went`).toBeGreaterThanOrEqual(1);

    // Every 2xx answer's run is on the surviving primary: its commit waited for the sync standby.
    const runIds = accepted.map(([, runId]) => runId);
    const found = await cdb.q("SELECT id FROM runs WHERE id = ANY($1::text[])", [runIds]);
    expect(found.length).toBe(new Set(runIds).size);
    // One run per event: a delivery sent again after a refusal did not start a second one.
    const runs = await cdb.q("SELECT input->>'id' AS event, count(*)::int AS n FROM runs GROUP BY 1");
    expect(runs.filter((r) => r.n !== 1)).toEqual([]);
    expect(runs.length).toBe(accepted.length);
    await waitFor(
      async () => (await cdb.q("SELECT count(*)::int AS n FROM runs WHERE status = 'completed'"))[0]?.n === accepted.length,
      90_000,
      "every run to complete",
    );
    // Each call step done once per run, and each took effect once at the target.
    const doubled = await cdb.q("SELECT run_id, node_id FROM steps WHERE status = 'done' AND node_id LIKE 'call_%' GROUP BY 1, 2 HAVING count(*) > 1");
    expect(doubled).toEqual([]);
    expect(target.effects()).toBe(2 * accepted.length);
    const repeats = [...target.calls.values()].reduce((sum, n) => sum + n - 1, 0);
    console.log(`calls repeated with the same Idempotency-Key (the target answered them without acting): ${repeats}`);
    for (const a of apps) expect(a.exits, a.name).toEqual([]);

    // LISTEN after the failovers: the relay's and the lane worker's subscriptions are on the new primary...
    const listening = await cdb.q(
      "SELECT application_name AS app FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' GROUP BY 1 ORDER BY 1",
    );
    expect(listening.map((r) => r.app)).toEqual(["holdfast-lane-io-listen", "holdfast-relay-listen"]);
    // ...and a new delivery completes sooner than any poll or sweep would have found it.
    for (const id of ["after-1", "after-2"]) {
      const sentAt = Date.now();
      const { status, runId } = await send(id);
      expect(status).toBe(202);
      await waitFor(async () => (await cdb.q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 60_000, `run of ${id}`);
      const tookMs = Date.now() - sentAt;
      console.log(`${id}: delivered to completed in ${tookMs} ms`);
      expect(tookMs).toBeLessThan(sweepStaleSeconds * 1_000);
    }
    console.log(`test body took ${Date.now() - started} ms`);
  }, 240_000);
});
