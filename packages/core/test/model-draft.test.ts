import { createTestDatabase, type ModelTarget, publish, startModelTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { createLogger } from "../src/base/log";
import { budgetsOf, budgetsReserve, budgetsSetAllowed, budgetsSettleAbandoned } from "../src/store/sql/budgets";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let model: ModelTarget;
let orgId: string;
const log = createLogger("test", "silent");
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;
let n = 0;
// 2 USD per million input tokens, 8 per million output tokens, in micros.
const prices = { inputMicrosPerMTok: 2_000_000, outputMicrosPerMTok: 8_000_000 };

beforeAll(async () => {
  t = await createTestDatabase();
  model = await startModelTarget("sk-test");
  const seeded = await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "draft", kind: "model_draft", config: { connection: "llm", system: "You write short emails.", prompt: "Write to {{contact.email}} about {{input.topic}}", maxTokens: 200 } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "draft" },
        { from: "draft", to: "e" },
      ],
    }),
    { automation: "draft" },
  );
  orgId = seeded.orgId;
  await createConnection(t.db, { orgId, kind: "model", name: "llm", config: { baseUrl: model.baseUrl, model: "test-model", ...prices }, secret: "sk-test" });
});
afterAll(async () => {
  await model?.close();
  await t?.drop();
});

const runner = () => new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.slow, retry: { ...lanes.slow.retry, baseMs: 1, capMs: 2 } }, log });

async function start() {
  const { runId } = await startRun(t.db, {
    orgSlug: "acme",
    automationSlug: "draft",
    rawBody: "{}",
    body: { id: `d${++n}`, email: `reader${n}@example.com`, topic: "the spring sale" },
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
  });
  const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1", [runId]);
  return { runId, stepId: stepId as string, key: `${runId}/draft/1` };
}

describe("model_draft", () => {
  it("drafts from the rendered prompt, reserves the worst case first and settles the real cost after", async () => {
    await budgetsSetAllowed(t.db, orgId, 1_000_000, "test"); // 1 USD
    const { stepId } = await start();
    expect((await runner().run(stepId)).kind).toBe("settled");
    const [step] = await rows("SELECT output FROM steps WHERE id = $1", [stepId]);
    expect(step.output.text).toBe(`Draft: Write to reader${n}@example.com about the spring sale`);
    expect(model.prompts.at(-1)).toContain("You write short emails.");
    const budget = await budgetsOf(t.db, orgId);
    expect(budget?.reservedMicros).toBe(0);
    expect(budget?.spentMicros).toBe(step.output.costMicros);
    expect(step.output.costMicros).toBeGreaterThan(0);
    expect(step.output.costMicros).toBeLessThan(200 * 8); // far below the reserved worst case of 200 output tokens
  });

  it("refuses a call the remaining budget cannot cover: the step parks with the reason, no call; raising the budget resumes it", async () => {
    const before = model.calls;
    const spent = (await budgetsOf(t.db, orgId))?.spentMicros ?? 0;
    await budgetsSetAllowed(t.db, orgId, spent + 500, "test"); // less than one draft's worst case
    const { stepId, runId } = await start();
    expect((await runner().run(stepId)).kind).toBe("parked");
    expect(model.calls).toBe(before);
    const [step] = await rows("SELECT status, error FROM steps WHERE id = $1", [stepId]);
    expect(step).toMatchObject({ status: "parked", error: { code: "budget_exhausted" } });
    expect(step.error.reason).toMatch(/raise the budget/);
    expect(await rows("SELECT count(*)::int AS n FROM effects WHERE run_id = $1", [runId])).toEqual([{ n: 0 }]);
    expect(await budgetsSetAllowed(t.db, orgId, 1_000_000, "test")).toBe(1);
    expect((await runner().run(stepId)).kind).toBe("settled");
    expect(model.calls).toBe(before + 1);
    expect(await rows("SELECT status FROM runs WHERE id = $1", [runId])).toEqual([{ status: "completed" }]);
  });

  it("is attempted at most twice", async () => {
    const { stepId } = await start();
    const before = model.calls;
    model.behave({ failNext: 5, failStatus: 503 });
    try {
      expect((await runner().run(stepId)).kind).toBe("retry_scheduled");
      await t.sql.query("UPDATE steps SET available_at = now() WHERE id = $1", [stepId]);
      expect((await runner().run(stepId)).kind).toBe("failed");
      expect(model.calls - before).toBe(2);
      const [step] = await rows("SELECT attempt, error FROM steps WHERE id = $1", [stepId]);
      expect(step).toMatchObject({ attempt: 2, error: { exhausted: true } });
      expect((await budgetsOf(t.db, orgId))?.reservedMicros).toBe(0); // both reservations settled (503: nothing charged)
    } finally {
      model.behave({ failNext: 0 });
    }
  });

  it("a reservation left by a worker that died mid-call is counted as spent by the sweeper", async () => {
    await budgetsSetAllowed(t.db, orgId, 5_000_000, "test");
    const before = await budgetsOf(t.db, orgId);
    await budgetsReserve(t.db, orgId, "run_x/draft/1", "stp_dead:1", 1234);
    expect((await budgetsOf(t.db, orgId))?.reservedMicros).toBe((before?.reservedMicros ?? 0) + 1234);
    expect(await budgetsSettleAbandoned(t.db, 3600)).toBe(0); // too young to call abandoned
    await t.sql.query("UPDATE budget_reservations SET created_at = now() - interval '2 hours' WHERE owner = 'stp_dead:1'");
    expect(await budgetsSettleAbandoned(t.db, 3600)).toBe(1);
    const after = await budgetsOf(t.db, orgId);
    expect(after?.reservedMicros).toBe(before?.reservedMicros);
    expect(after?.spentMicros).toBe((before?.spentMicros ?? 0) + 1234);
  });
});
