import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDraft, InvalidDraftError, publishDraft, saveDraft } from "../src/run/automations/drafts";
import { createConnection } from "../src/providers/connections/connect";
import { budgetsOf, budgetsReserve, budgetsSetAllowed, defaultModelBudgetUsd } from "../src/store/sql/budgets";

/**
 * Defaults that do not stop runs in silence (issue 41): a new organisation has a model budget per month from the
 * start, a new month starts its spend at zero, and publishing a graph with a Draft step while the budget is not set
 * or used up lists that as a problem with the place to fix it.
 */
let t: TestDatabase;
let orgId = "";
let automationId = "";

const graph = {
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "write", kind: "model_draft", config: { connection: "llm", prompt: "Write to {{contact.email}}", maxTokens: 1000 } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "t", to: "write" },
    { from: "write", to: "done" },
  ],
};

async function publishOutcome(): Promise<{ path: string; message: string; href?: string }[] | "published"> {
  const { revision } = await getDraft(t.db, orgId, automationId);
  await saveDraft(t.db, orgId, automationId, graph, revision, "test");
  return publishDraft(t.db, orgId, automationId, "test", "owner").then(
    () => "published" as const,
    (e: unknown) => {
      if (!(e instanceof InvalidDraftError)) throw e;
      return e.problems;
    },
  );
}

beforeAll(async () => {
  t = await createTestDatabase();
  const v1 = await publish(t.db, httpChainGraph("https://crm.example.com/a", 1), { automation: "drafting" });
  orgId = v1.orgId;
  automationId = v1.automationId;
  // $10 per million output tokens: one draft of 1000 tokens costs at most $0.01.
  await createConnection(t.db, {
    orgId,
    kind: "model",
    name: "llm",
    config: { baseUrl: "https://model.example.com", model: "m", inputMicrosPerMTok: 1_000_000, outputMicrosPerMTok: 10_000_000 },
    secret: "s",
  });
});
afterAll(async () => {
  await t?.drop();
});

describe("the model budget by default", () => {
  it("a new organisation has the default monthly budget, set by the database, nothing spent", async () => {
    const created = await t.sql.query<{ id: string }>("INSERT INTO organisations (slug, name) VALUES ('fresh', 'Fresh') RETURNING id");
    const budget = await budgetsOf(t.db, created.rows[0]!.id);
    expect(budget).toEqual({ allowedMicros: defaultModelBudgetUsd * 1e6, reservedMicros: 0, spentMicros: 0 });
    expect(await budgetsOf(t.db, orgId)).toMatchObject({ allowedMicros: defaultModelBudgetUsd * 1e6 });
  });

  it("a new month starts the spend at zero", async () => {
    const created = await t.sql.query<{ id: string }>("INSERT INTO organisations (slug, name) VALUES ('monthly', 'Monthly') RETURNING id");
    const id = created.rows[0]!.id;
    await t.sql.query("UPDATE org_budgets SET spent_micros = allowed_micros, period_start = period_start - interval '1 month' WHERE org_id = $1", [id]);
    expect((await budgetsOf(t.db, id))?.spentMicros).toBe(0);
    expect(await budgetsReserve(t.db, id, "run_x/draft/1", "stp_x:1", 1_000)).toBe(defaultModelBudgetUsd * 1e6 - 1_000);
    const row = await t.sql.query("SELECT spent_micros::int AS spent, period_start = date_trunc('month', now() AT TIME ZONE 'UTC')::date AS current FROM org_budgets WHERE org_id = $1", [id]);
    expect(row.rows[0]).toEqual({ spent: 0, current: true });
  });

  it("publishes a Draft step while the budget covers a draft", async () => {
    expect(await publishOutcome()).toBe("published");
  });

  it("lists a used-up budget as a problem on the Draft step, with the link to Settings", async () => {
    await t.sql.query("UPDATE org_budgets SET spent_micros = allowed_micros - 5000 WHERE org_id = $1", [orgId]);
    expect(await publishOutcome()).toEqual([
      {
        path: "node:write",
        href: "/settings?org=acme#model-budget",
        message: "The model budget is used up ($0.01 of $20.00 left this month): Draft steps will wait. Raise it in Settings -> Model budget.",
      },
    ]);
    await budgetsSetAllowed(t.db, orgId, 40_000_000, "test");
    expect(await publishOutcome()).toBe("published");
  });

  it("lists a budget that is not set as a problem", async () => {
    await t.sql.query("DELETE FROM org_budgets WHERE org_id = $1", [orgId]);
    expect(await publishOutcome()).toEqual([
      { path: "node:write", href: "/settings?org=acme#model-budget", message: "The model budget is not set: Draft steps will wait. Set one in Settings -> Model budget." },
    ]);
    const draft = await getDraft(t.db, orgId, automationId);
    expect(draft.problems.map((p) => p.message)).toContain("The model budget is not set: Draft steps will wait. Set one in Settings -> Model budget.");
  });
});
