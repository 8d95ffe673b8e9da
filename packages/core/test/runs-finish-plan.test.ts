import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runsFinish, runsFinishSql } from "../src/store/sql/runs";
import { startRun } from "../src/run/start/start-run";
import { parseGraph } from "../src/versions/graph";

// Ending a run must find it by its primary key, whatever the size of `runs`. Joined only to jsonb_to_recordset (taken
// for 100 rows), the update read the whole table whenever that looked cheaper: at 5,000 runs it did, 2.6 ms a run
// ended (the 09:00 spike's engine walks; the race ends its runs in SQL functions, by primary key already).

const graph = parseGraph({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "w", kind: "wait", config: { rule: { kind: "duration", seconds: 3600 }, spreadSeconds: 0 } },
    { id: "e", kind: "end" },
  ],
  edges: [
    { from: "t", to: "w" },
    { from: "w", to: "e" },
  ],
});

let t: TestDatabase;
let runId = "";
beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, graph, { automation: "wait" });
  const body = { id: "evt_1" };
  ({ runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "wait",
    rawBody: JSON.stringify(body),
    body,
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  }));
  // 5,000 finished runs beside it, as a deployment's table holds after a while, with the planner's statistics.
  await t.sql.query(
    `INSERT INTO runs (id, org_id, automation_id, version_id, start_key, status, input, finished_at)
     SELECT 'run_old_' || g, org_id, automation_id, version_id, start_key || ':' || g, 'completed', input, now()
     FROM runs, generate_series(1, 5000) g WHERE id = $1`,
    [runId],
  );
  // And running ones: with the one under test alone, the partial index of running runs (runs_automation_running_idx,
  // id its third column) cost the same as the primary key to the planner, which then chose by the table's shape (a
  // column more or less), not by what a deployment has. With running runs beside it, that index reads them all.
  await t.sql.query(
    `INSERT INTO runs (id, org_id, automation_id, version_id, start_key, status, input)
     SELECT 'run_live_' || g, org_id, automation_id, version_id, start_key || ':live:' || g, 'running', input
     FROM runs, generate_series(1, 500) g WHERE id = $1`,
    [runId],
  );
  await t.sql.query("ANALYZE runs");
});
afterAll(() => t?.drop());

describe("runsFinish", () => {
  it("finds the runs it ends by their primary key, not by reading every run", async () => {
    const statement = runsFinishSql([{ runId, status: "completed", error: null }]);
    const plan = (await t.sql.query({ text: `EXPLAIN ${statement.text}`, values: statement.values })).rows.map((r) => r["QUERY PLAN"] as string).join("\n");
    expect(plan).toMatch(/Index Scan using runs_pkey on runs/);
    expect(plan).not.toMatch(/Seq Scan on runs/);
  });

  it("ends only the running runs it names, each with its status", async () => {
    expect(await runsFinish(t.db, [{ runId, status: "failed", error: { message: "stopped by the test" } }, { runId: "run_old_7", status: "failed", error: null }])).toBe(1);
    expect((await t.sql.query("SELECT status, error, finished_at IS NOT NULL AS finished FROM runs WHERE id = ANY($1) ORDER BY id", [[runId, "run_old_7"]])).rows).toEqual([
      { status: "failed", error: { message: "stopped by the test" }, finished: true },
      { status: "completed", error: null, finished: true },
    ]);
  });
});
