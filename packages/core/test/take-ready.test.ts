import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { effectKinds } from "../src/versions/kinds/registry";
import { stepsClaimIfLeaseFree, stepsTakeReady } from "../src/store/sql/steps-claim";
import { startRun } from "../src/run/start/start-run";

// First-step dispatch by LISTEN: a lane worker takes due step.ready rows of its lane and claims their steps in one
// statement and one commit (holdfast_steps_take_ready).

let t: TestDatabase;
let n = 0;
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, httpChainGraph("http://127.0.0.1:9/", 2, { maxAttempts: 3 }));
});
afterAll(async () => {
  await t?.drop();
});

async function started(): Promise<{ runId: string; stepId: string }> {
  const headers = { "webhook-id": `evt_${++n}`, "webhook-timestamp": null, "webhook-signature": null };
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: { n }, headers, via: "test", auth: { kind: "operator" } });
  const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId]);
  return { runId, stepId: id };
}

describe("taking ready steps from the outbox", () => {
  it("takes due rows of its lane up to the limit, marks them sent and claims their steps in the same commit", async () => {
    await t.sql.query("DELETE FROM outbox");
    const runs = await Promise.all([started(), started(), started()]);
    const first = await stepsTakeReady(t.sql, "io", 2, "w1", 30_000, effectKinds());
    expect(first.taken).toBe(2);
    expect(first.more).toBe(true); // the third is due
    expect(first.claimed.map((s) => [s.attempt, s.lane])).toEqual([
      [1, "io"],
      [1, "io"],
    ]);
    const rest = await stepsTakeReady(t.sql, "io", 1, "w1", 30_000, effectKinds());
    expect(rest.taken).toBe(1);
    expect(rest.more).toBe(false); // it took the last: a worker does not take again for nothing
    const claimed = [...first.claimed, ...rest.claimed].map((s) => s.id).sort();
    expect(claimed).toEqual(runs.map((r) => r.stepId).sort());
    expect(await rows("SELECT DISTINCT status, owner FROM steps WHERE id = ANY($1)", [claimed])).toEqual([{ status: "running", owner: "w1" }]);
    expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE topic = 'step.ready' AND sent_at IS NULL")).toEqual([{ n: 0 }]);
    // Each step's claim is on its timeline, written by the take's transaction.
    expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE step_id = ANY($1) AND type = 'step.claimed' AND worker = 'w1'", [claimed])).toEqual([{ n: 3 }]);
    expect((await stepsTakeReady(t.sql, "io", 5, "w1", 30_000, effectKinds())).taken).toBe(0);
  });

  it("leaves other lanes' rows and rows not yet due; a row whose step is leased elsewhere is taken but not claimed", async () => {
    await t.sql.query("DELETE FROM outbox");
    const leased = await started();
    expect(await stepsClaimIfLeaseFree(t.sql, leased.stepId, "other", 30_000, effectKinds())).toBeDefined();
    const later = await started();
    await t.sql.query("UPDATE outbox SET available_at = now() + interval '1 hour' WHERE payload->>'stepId' = $1", [later.stepId]);
    const other = await started();
    await t.sql.query("UPDATE outbox SET payload = jsonb_set(payload, '{lane}', '\"model\"') WHERE payload->>'stepId' = $1", [other.stepId]);
    const got = await stepsTakeReady(t.sql, "io", 10, "w1", 30_000, effectKinds());
    expect(got).toEqual({ taken: 1, claimed: [], more: false });
    expect(await rows("SELECT owner, attempt FROM steps WHERE id = $1", [leased.stepId])).toEqual([{ owner: "other", attempt: 1 }]);
    expect(await rows("SELECT payload->>'stepId' AS step FROM outbox WHERE sent_at IS NULL ORDER BY id")).toEqual([{ step: later.stepId }, { step: other.stepId }]);
  });
});
