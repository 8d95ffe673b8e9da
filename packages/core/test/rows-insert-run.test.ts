import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceRun } from "../src/engine/advance";
import { effectKinds } from "../src/kinds/registry";
import { createLogger } from "../src/log";
import { type ClaimedStep, stepsClaimIfLeaseFree } from "../src/sql/steps";
import { startRun } from "../src/start/start-run";
import { GraphCache } from "../src/versions/graph-cache";

// Steps, the timeline and the outbox keep no foreign key to their run: holdfast_rows_insert keeps each row a start or a
// settle writes to the run that statement holds, and a row naming another run fails the whole statement (HF005).

let t: TestDatabase;
const graphs = new GraphCache();
let n = 0;
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, httpChainGraph("http://127.0.0.1:9/", 2, { maxAttempts: 3 }));
  createLogger("test", "silent");
});
afterAll(async () => {
  await t?.drop();
});

async function startedRun(): Promise<{ orgId: string; runId: string }> {
  const key = `evt_${++n}`;
  const headers = { "webhook-id": key, "webhook-timestamp": null, "webhook-signature": null };
  const { runId } = await startRun(t.db, { orgSlug: "acme", automationSlug: "flow", rawBody: "{}", body: { n }, headers, via: "test", auth: { kind: "operator" } });
  const [{ org_id: orgId }] = await rows("SELECT org_id FROM runs WHERE id = $1", [runId]);
  return { orgId, runId };
}

async function claimedStep(): Promise<ClaimedStep> {
  const { orgId, runId } = await startedRun();
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  const [{ id }] = await rows("SELECT id FROM steps WHERE run_id = $1 AND status = 'ready'", [runId]);
  const step = await stepsClaimIfLeaseFree(t.sql, id, "w1", 30_000, effectKinds());
  if (!step) throw new Error("not claimed");
  return step;
}

/** A walk's rows (PlanRows) with one new step, one timeline row and one wake-up, each naming `run`. */
const rowsNaming = (run: { orgId: string; runId: string }, stepId: string, wrong: "steps" | "events" | "outbox", other: { orgId: string; runId: string }) => {
  const of = (table: typeof wrong) => {
    const named = table === wrong ? other : run;
    return { orgId: named.orgId, runId: named.runId };
  };
  return {
    steps: [{ id: stepId, ...of("steps"), nodeId: "injected", iteration: 1, kind: "http_request", lane: "io", maxAttempts: 3, status: "ready" }],
    events: [{ ...of("events"), stepId, nodeId: "injected", type: "step.scheduled", lane: "io", worker: "w1", data: null }],
    outbox: [{ ...of("outbox"), topic: "step.ready", payload: { stepId } }],
    finish: null,
    advanced: [],
    claim: null,
  };
};

const settle = (step: ClaimedStep, planRows: unknown) =>
  t.sql.query(
    `SELECT holdfast_step_settle($1, $2, 'w1', 'done', '{"status": 200}'::jsonb, NULL, 0, 'step.succeeded', NULL, $3, $4::jsonb, NULL, NULL) AS r`,
    [step.id, step.attempt, String(step.runSeq), JSON.stringify(planRows)],
  );

const codeOf = (p: Promise<unknown>) => p.then(() => "committed", (e: { code?: string }) => e.code ?? String(e));

describe("a walk's rows are kept to the run the statement holds", () => {
  it("a settle whose rows name another run writes nothing: not the rows, not the settle", async () => {
    const other = await startedRun();
    for (const wrong of ["steps", "events", "outbox"] as const) {
      const step = await claimedStep();
      const stepId = `stp_injected_${wrong}`;
      const before = await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [other.runId]);
      expect(await codeOf(settle(step, rowsNaming(step, stepId, wrong, other)))).toBe("HF005");
      // The step is still the attempt's, running: its next settle (or the sweeper after its lease) carries on.
      expect(await rows("SELECT status, attempt FROM steps WHERE id = $1", [step.id])).toEqual([{ status: "running", attempt: step.attempt }]);
      expect(await rows("SELECT id FROM steps WHERE id = $1", [stepId])).toEqual([]);
      expect(await rows("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [other.runId])).toEqual(before);
      expect(await rows("SELECT id FROM outbox WHERE payload->>'stepId' = $1", [stepId])).toEqual([]);
    }
  });

  it("the same rows naming the settling step's own run are written (the check refuses only the wrong run)", async () => {
    const step = await claimedStep();
    const other = await startedRun();
    const stepId = "stp_own_run";
    const result = await settle(step, rowsNaming(step, stepId, "steps", step)).then((r) => r.rows[0].r);
    expect(result).toMatchObject({ changed: true, advanced: true });
    expect(await rows("SELECT run_id, org_id FROM steps WHERE id = $1", [stepId])).toEqual([{ run_id: step.runId, org_id: step.orgId }]);
    expect(await rows("SELECT count(*)::int AS n FROM outbox WHERE payload->>'stepId' = $1 AND run_id = $2", [stepId, step.runId])).toEqual([{ n: 1 }]);
    expect(other.runId).not.toBe(step.runId);
  });

  it("a start whose first rows name another organisation's run writes no run at all", async () => {
    const [{ org_id: orgId, automation_id: automationId, version_id: versionId }] = await rows(
      "SELECT org_id, automation_id, version_id FROM runs LIMIT 1",
    );
    const runId = "run_start_injected";
    const planRows = rowsNaming({ orgId, runId }, "stp_start_injected", "events", { orgId: "org_someone_else", runId });
    const start = t.sql.query("SELECT holdfast_run_start($1, $2, $3, $4, $5, '{}'::jsonb, '{}'::jsonb, $6::jsonb, NULL) AS r", [
      runId,
      orgId,
      automationId,
      versionId,
      "injected-start",
      JSON.stringify(planRows),
    ]);
    expect(await codeOf(start)).toBe("HF005");
    expect(await rows("SELECT id FROM runs WHERE id = $1", [runId])).toEqual([]);
    expect(await rows("SELECT id FROM steps WHERE run_id = $1", [runId])).toEqual([]);
  });
});
