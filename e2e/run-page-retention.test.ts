import { GraphCache, parseGraph } from "@holdfast/core/versions";
import { type SweepContext, sweepServiceDefinitions } from "@holdfast/core/run";
import { addMember, fetchAgain, publish, sessionCookieFor, startTestDeployment, startTestRun, type TestDeployment, testPassword } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A finished run whose timeline the retention removed still has its page: its status, its path and a sentence
 * saying the timeline is gone and after how many days; a run whose timeline is kept says nothing of the kind.
 */
let d: TestDeployment;
let cookie = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  // Branches only: the start's one statement walks the run to its end, so no worker is needed to finish it.
  const { orgId } = await publish(
    d.t.db,
    parseGraph({
      nodes: [
        { id: "start", kind: "trigger", config: { eventIdField: "id" } },
        { id: "is_pro", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
        { id: "pro", kind: "end" },
        { id: "free", kind: "end" },
      ],
      edges: [
        { from: "start", to: "is_pro" },
        { from: "is_pro", to: "pro", label: "true" },
        { from: "is_pro", to: "free", label: "false" },
      ],
    }),
    { automation: "triage" },
  );
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "viewer");
  await d.startWeb();
  cookie = await sessionCookieFor(d.t.db, "sam@acme.test", testPassword);
});

afterAll(async () => d?.stop());

const page = async (runId: string) => {
  const res = await fetchAgain(`${d.web.base}/runs/${runId}`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return (await res.text()).replaceAll("<!-- -->", "");
};

describe("the run page after the timeline retention", () => {
  it("renders a run whose timeline was removed, says so, and leaves a kept run's page as it was", async () => {
    const old = await startTestRun(d.t.db, "triage", { id: "evt_old", plan: "pro" });
    const kept = await startTestRun(d.t.db, "triage", { id: "evt_kept", plan: "free" });
    expect(await q("SELECT status FROM runs WHERE id = ANY($1)", [[old, kept]])).toEqual([{ status: "completed" }, { status: "completed" }]);
    expect((await page(old)).includes("Took the true path")).toBe(true);
    await q("UPDATE runs SET finished_at = now() - interval '40 days', created_at = now() - interval '40 days' WHERE id = $1", [old]);

    const retention = sweepServiceDefinitions.find((d) => d.name === "timeline-retention");
    const ctx: SweepContext = { db: d.t.db, actor: "sweeper", graphs: new GraphCache(), systemMail: null };
    expect(await retention?.make({ retentionDays: 30 } as never).runOnce(ctx)).toEqual({ runs: 1, deleted: expect.any(Number) });

    const html = await page(old);
    expect(html).toContain("The timeline of this run was removed after 30 days (retention).");
    expect(html).toContain('data-state="completed"');
    expect(html).not.toContain("Took the true path"); // told from the timeline, which is gone
    const keptHtml = await page(kept);
    expect(keptHtml).not.toContain("was removed after");
    expect(keptHtml).toContain("Took the false path");
  });
});
