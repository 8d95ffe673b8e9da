import { createPool, openPool } from "@holdfast/db";
import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceRun } from "../src/run/engine/advance";
import { effectKinds } from "../src/versions/kinds/registry";
import { stepsWarm } from "../src/store/sql/steps-warm";
import { startRun } from "../src/run/start/start-run";
import { GraphCache } from "../src/versions/graph-cache";

// A lane worker's hot-path pool: every connection opened, and its statements planned, before the first step, and
// never closed for being idle (apps/lane-worker/src/main.ts).

let t: TestDatabase;
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
const warm = (c: Parameters<typeof stepsWarm>[0]) => stepsWarm(c, "io", "w-warm", 30_000, effectKinds());
const hotStatements = ["holdfast_step_claim", "holdfast_step_heartbeat", "holdfast_step_settle_batch", "holdfast_steps_take_ready"];

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, httpChainGraph("http://127.0.0.1:9/", 2));
});
afterAll(async () => {
  await t?.drop();
});

describe("openPool", () => {
  it("opens every connection at once and plans the hot statements on each, changing no row", async () => {
    // A run whose first step is due, with its step.ready row unsent: the warm-up's take (of no rows) leaves both.
    const headers = { "webhook-id": "evt_warm", "webhook-timestamp": null, "webhook-signature": null };
    const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: {}, headers, via: "test", auth: { kind: "operator" } });
    const [{ org_id: orgId }] = await rows("SELECT org_id FROM runs WHERE id = $1", [runId]);
    await advanceRun(t.db, new GraphCache(), { orgId, runId, reason: "started" });
    const snapshot = () =>
      rows(
        `SELECT (SELECT json_agg(s ORDER BY id) FROM steps s) AS steps, (SELECT json_agg(o ORDER BY id) FROM outbox o) AS outbox,
                (SELECT count(*)::int FROM run_events) AS events, (SELECT count(*)::int FROM effects) AS effects`,
      );
    const before = await snapshot();
    expect(await rows("SELECT 1 FROM outbox WHERE topic = 'step.ready' AND sent_at IS NULL AND available_at <= now()")).toHaveLength(1);

    const pool = createPool(t.url, { poolSize: 5, keepOpen: true, applicationName: "holdfast-hot-pool-test" });
    try {
      await openPool(pool, 5, warm);
      expect(pool.totalCount).toBe(5);
      expect(pool.idleCount).toBe(5);
      const [{ n }] = await rows("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'holdfast-hot-pool-test'");
      expect(n).toBe(5);
      expect(await snapshot()).toEqual(before);

      // Each of the five connections (all idle, so handed out without opening another) has every hot statement.
      const clients = await Promise.all(Array.from({ length: 5 }, () => pool.connect()));
      try {
        expect(pool.totalCount).toBe(5);
        for (const c of clients) {
          const prepared = (await c.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name")).rows.map((r) => r.name);
          expect(prepared).toEqual(expect.arrayContaining(hotStatements));
        }
      } finally {
        for (const c of clients) c.release();
      }
    } finally {
      await pool.end();
    }
  });

  it("keeps idle connections open past the pool's idle timeout (10 s)", async () => {
    const pool = createPool(t.url, { poolSize: 3, keepOpen: true, applicationName: "holdfast-hot-pool-kept" });
    const plain = createPool(t.url, { poolSize: 3, applicationName: "holdfast-hot-pool-plain" });
    try {
      await Promise.all([openPool(pool, 3, warm), openPool(plain, 3, warm)]);
      const pids = async (app: string) => (await rows("SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid", [app])).map((r) => r.pid);
      const kept = await pids("holdfast-hot-pool-kept");
      expect(kept).toHaveLength(3);
      expect(await pids("holdfast-hot-pool-plain")).toHaveLength(3);
      await new Promise((r) => setTimeout(r, 10_500));
      // The same server processes, so the same planned statements: none was closed and opened again.
      expect(await pids("holdfast-hot-pool-kept")).toEqual(kept);
      expect(pool.totalCount).toBe(3);
      // Without keepOpen the pool closes them (what every first step after a quiet spell used to wait for).
      expect(plain.totalCount).toBe(0);
    } finally {
      await Promise.all([pool.end(), plain.end()]);
    }
  }, 30_000);

  it("fails when a connection cannot be warmed, and hands none of the failed ones out", async () => {
    const pool = createPool(t.url, { poolSize: 3, keepOpen: true, applicationName: "holdfast-hot-pool-failed" });
    try {
      let calls = 0;
      const failing = async (c: Parameters<typeof stepsWarm>[0]) => {
        if (++calls === 2) throw new Error("refused");
        await warm(c);
      };
      await expect(openPool(pool, 3, failing)).rejects.toThrow("refused");
      // The one that failed was closed; the two warmed ones stay.
      expect(pool.totalCount).toBe(2);
    } finally {
      await pool.end();
    }
  });
});
