import { createTestDatabase, publish, splitGraph, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { choosePath } from "../src/decide/walk/split";
import { startRun } from "../src/run/start/start-run";

let t: TestDatabase;
const paths = { A: 70, B: 30 };

beforeAll(async () => {
  t = await createTestDatabase();
  const graph = splitGraph(paths);
  await publish(t.db, graph, { automation: "split" });
});
afterAll(async () => {
  await t?.drop();
});

function deliver(id: string, email: string) {
  return startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "split",
    rawBody: "{}",
    body: { id, email },
    headers: { "webhook-id": id, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
}

describe("a published A/B split", () => {
  it("sends each of 200 contacts down the chooser's path, recorded on its timeline, and roughly by the weights", async () => {
    const runs: { runId: string; email: string }[] = [];
    for (let i = 0; i < 200; i++) {
      const email = `Lead${i}@Example.com`;
      runs.push({ runId: (await deliver(`evt_${i}`, email)).runId, email });
    }
    // A repeated delivery is the same run: it does not walk again.
    expect((await deliver("evt_0", "Lead0@Example.com")).runId).toBe(runs[0]?.runId);
    const { rows } = await t.sql.query(
      `SELECT r.id, r.status, e.data->>'path' AS path,
              (SELECT count(*)::int FROM run_events x WHERE x.run_id = r.id AND x.type = 'split.chosen') AS chosen,
              (SELECT x.node_id FROM run_events x WHERE x.run_id = r.id AND x.type = 'run.completed') AS ended
         FROM runs r JOIN run_events e ON e.run_id = r.id AND e.type = 'split.chosen'
        WHERE r.id = ANY($1::text[])`,
      [runs.map((r) => r.runId)],
    );
    expect(rows).toHaveLength(200);
    const byRun = new Map(rows.map((r) => [r.id as string, r]));
    let a = 0;
    for (const { runId, email } of runs) {
      const row = byRun.get(runId);
      const expected = choosePath({ paths }, `contact:${email.toLowerCase()}`, "pick");
      expect(row).toMatchObject({ status: "completed", path: expected, chosen: 1, ended: expected === "A" ? "end_a" : "end_b" });
      if (expected === "A") a += 1;
    }
    // 70% of 200 is 140; a binomial's 3 standard deviations are about 19.
    expect(a).toBeGreaterThan(120);
    expect(a).toBeLessThan(160);
  });
});
