import { connectAs, createTestDatabase, lineGraph, publish, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journeyCounts } from "../src/run/counts/journey-counts";
import { runsAtCount } from "../src/run/counts/runs-at-count";
import { startRun } from "../src/run/start/start-run";
import { scanCounts } from "./journey-counts-scan";

let t: TestDatabase;
let ids: Awaited<ReturnType<typeof publish>>;

beforeAll(async () => {
  t = await createTestDatabase();
  const graph = lineGraph(
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "call", kind: "http_request", config: { url: "http://127.0.0.1:9/x", method: "POST" } },
    { id: "e", kind: "end" },
  );
  ids = await publish(t.db, graph, { automation: "counted" });
});
afterAll(async () => {
  await t?.drop();
});

async function counts(window: "24h" | "all" = "all") {
  return journeyCounts(t.db, { orgId: ids.orgId, automationId: ids.automationId, versionId: ids.versionId, window });
}

describe("journeyCounts, read before any fold", () => {
  it("counts each step's runs by state as a scan of steps and runs does, without test runs", async () => {
    const runIds: string[] = [];
    for (let i = 0; i < 6; i++) runIds.push(await startTestRun(t.db, "counted", { id: `evt_${i}` }));
    // A test run (the editor's): never counted.
    await startRun(t.db, {
      orgSlug: "acme",
      automationSlug: "counted",
      rawBody: "{}",
      body: { id: "evt_test" },
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
      test: { by: "user:sam@acme.test" },
    });
    // Move a few steps by hand, as a worker's settle would (the triggers count any change of status).
    await t.sql.query(`UPDATE steps SET status = 'parked' WHERE run_id = $1`, [runIds[0]]);
    await t.sql.query(`UPDATE steps SET status = 'done', settled_at = now() WHERE run_id = ANY($1::text[])`, [[runIds[1], runIds[2]]]);
    await t.sql.query(`UPDATE steps SET status = 'failed', settled_at = now() WHERE run_id = $1`, [runIds[3]]);
    await t.sql.query(`UPDATE runs SET status = 'failed', finished_at = now() WHERE id = $1`, [runIds[3]]);

    const scan = await scanCounts(async (q, p) => (await t.sql.query(q, p)).rows, [ids.versionId]);
    const c = await counts();
    expect(scan.nodes.call).toEqual({ now: 2, held: 1, passed: 2, failed: 1, cancelled: 0, converted: 0 });
    expect(c.nodes.call).toEqual({ ...scan.nodes.call, email: null });
    expect(c.nodes.e).toEqual({ now: 0, held: 0, passed: 0, failed: 0, cancelled: 0, converted: 0, email: null });
    expect(c.runs).toEqual(scan.runs);
    expect(c.versions).toEqual([{ versionId: ids.versionId, version: ids.version, started: 6, converted: 0, now: 5 }]);
    expect(c.pendingChanges).toBeGreaterThan(0);
    expect(c.foldedAt).toBeInstanceOf(Date);
    // Today is within every window.
    expect((await counts("24h")).nodes.call).toEqual(c.nodes.call);

    // A change dated two days ago leaves the 24-hour window but not "all"; 'now' is counted over all days.
    // As the database's owner: no statement of the product updates a change.
    const owner = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
    await owner.query(`UPDATE count_changes SET at = at - interval '3 days' WHERE run_id = $1`, [runIds[1]]);
    // A step's changes name no run (20261211100000_count_changes_step_rows): one of the two 'passed' at call, alike.
    await owner.query(
      `UPDATE count_changes SET at = at - interval '3 days'
       WHERE ctid = (SELECT ctid FROM count_changes WHERE run_id IS NULL AND node_id = 'call' AND to_bucket = 'passed' LIMIT 1)`,
    );
    await owner.end();
    const day = await counts("24h");
    expect(day.nodes.call).toMatchObject({ passed: 1, now: 2 });
    expect(day.runs.started).toBe(5);
    expect(day.runs.now).toBe(5);
  });

  it("lists the runs behind a count, newest first, a page at a time, without test runs", async () => {
    const q = { orgId: ids.orgId, automationId: ids.automationId, versionId: ids.versionId, nodeId: "call", window: "all" as const };
    const now = await runsAtCount(t.db, { ...q, bucket: "now", limit: 1 });
    expect(now.runs).toHaveLength(1);
    expect(now.nextCursor).not.toBeNull();
    const rest = await runsAtCount(t.db, { ...q, bucket: "now", limit: 5, cursor: now.nextCursor });
    const listed = [...now.runs, ...rest.runs].map((r) => r.runId);
    const { rows } = await t.sql.query<{ id: string }>(
      `SELECT r.id FROM runs r JOIN steps s ON s.run_id = r.id AND s.node_id = 'call'
        WHERE r.version_id = $1 AND NOT r.test AND s.status IN ('ready', 'running', 'waiting') ORDER BY r.id DESC`,
      [ids.versionId],
    );
    expect(listed).toEqual(rows.map((r) => r.id));
    expect(rest.nextCursor).toBeNull();

    const passed = await runsAtCount(t.db, { ...q, bucket: "passed", limit: 1 });
    const passedRest = await runsAtCount(t.db, { ...q, bucket: "passed", limit: 1, cursor: passed.nextCursor });
    expect([...passed.runs, ...passedRest.runs]).toHaveLength(2);
    expect(passed.runs[0]?.runId).not.toBe(passedRest.runs[0]?.runId);
    expect((await runsAtCount(t.db, { ...q, bucket: "held", limit: 10 })).runs.map((r) => r.stepStatus)).toEqual(["parked"]);
    expect((await runsAtCount(t.db, { ...q, bucket: "failed", limit: 10 })).runs).toHaveLength(1);
  });
});

describe("the changes' tables", () => {
  it("are append-only for the web: insert and delete, never update (the worker role keeps UPDATE for the fold's row locks)", async () => {
    const rows = await t.db.$queryRaw<{ role: string; table: string; insert: boolean; update: boolean; delete: boolean }[]>`
      SELECT r AS role, tb AS table, has_table_privilege(r, tb, 'INSERT') AS insert,
             has_table_privilege(r, tb, 'UPDATE') AS update, has_table_privilege(r, tb, 'DELETE') AS delete
      FROM unnest(ARRAY['holdfast_web', 'holdfast_worker']) r, unnest(ARRAY['count_changes', 'run_split_paths']) tb ORDER BY 1, 2`;
    expect(rows).toEqual([
      { role: "holdfast_web", table: "count_changes", insert: true, update: false, delete: true },
      { role: "holdfast_web", table: "run_split_paths", insert: true, update: false, delete: true },
      { role: "holdfast_worker", table: "count_changes", insert: true, update: true, delete: true },
      { role: "holdfast_worker", table: "run_split_paths", insert: true, update: true, delete: true },
    ]);
  });
});
