import { createLogger, lanes } from "@holdfast/core/base";
import { GraphCache } from "@holdfast/core/versions";
import { requestCancel, StepRunner } from "@holdfast/core/run";
import { addMember, type HttpTarget, lineGraph, publish, screenshots, signedInPage, startHttpTarget, startTestDeployment, startTestRun, type TestDeployment } from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A run cancelled while its CRM call's outcome was unknown (the CRM answered 502) is in the runs list's "needs
 * review" filter; its page says the call may or may not have happened and asks what Sam found; his answer takes the
 * run off the list. Screenshot: e2e/artifacts/needs-review-cancelled.png.
 */
let d: TestDeployment;
let target: HttpTarget;
let browser: Browser;
let orgId = "";
const graphs = new GraphCache();
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shot = screenshots("needs-review");

beforeAll(async () => {
  d = await startTestDeployment();
  target = d.closeAtStop(await startHttpTarget());
  target.behave({ failFirst: 1_000, failStatus: 502 });
  const graph = lineGraph({ id: "start", kind: "trigger", config: { eventIdField: "id" } }, { id: "update_crm", kind: "http_request", config: { url: target.url, maxAttempts: 5 } }, { id: "done", kind: "end" });
  orgId = (await publish(d.t.db, graph, { automation: "crm-sync" })).orgId;
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "editor");
  await d.startWeb();
  browser = await d.launchBrowser();
});
afterAll(async () => d?.stop());

describe("a cancelled run whose call's outcome was unknown", () => {
  it("is listed as needs review, its page asks what was found, and the answer takes it off the list", async () => {
    const runId = await startTestRun(d.t.db, "crm-sync", { id: "evt-502", email: "maya@example.com" });
    const [step] = await q("SELECT id FROM steps WHERE run_id = $1", [runId]);
    await new StepRunner({ db: d.t.db, graphs, worker: "w", lane: lanes.io, log: createLogger("test", "silent") }).run(step.id);
    expect(await q("SELECT status FROM effects WHERE run_id = $1", [runId])).toEqual([{ status: "outcome_unknown" }]);
    await requestCancel(d.t.db, graphs, orgId, runId, "wrong list", "user:sam@acme.test");

    const page = await signedInPage(browser, d.web.base, "sam@acme.test", { viewport: { width: 1280, height: 800 } });
    await page.goto(`${d.web.base}/?status=needs_review`);
    await expect.poll(() => page.locator(`tr[data-run="${runId}"]`).count()).toBe(1);
    expect(await page.locator(`tr[data-run="${runId}"]`).textContent()).toContain("needs_review");

    await page.goto(`${d.web.base}/runs/${runId}`);
    const summary = page.locator("section.summary");
    expect(await summary.getAttribute("data-state")).toBe("needs_review");
    expect(await page.locator("[data-status-sentence]").textContent()).toMatch(/Cancelled by sam@acme\.test.*the call at .*"update_crm" may or may not have happened/);
    const form = page.locator(`[data-review-stopped="${runId}/update_crm/1"]`);
    await form.locator("textarea[name=note]").fill("The CRM shows Maya's record updated at 10:02");
    await shot(page, "cancelled");
    await form.getByRole("button", { name: "It happened" }).click();
    await page.getByText("Recorded: it happened, with your note.").waitFor();
    expect(await page.locator("section.summary").getAttribute("data-state")).toBe("cancelled");
    expect(await page.locator(`[data-review-stopped]`).count()).toBe(0);
    expect(await q("SELECT status, result->>'note' AS note FROM effects WHERE run_id = $1", [runId])).toEqual([
      { status: "settled", note: "The CRM shows Maya's record updated at 10:02" },
    ]);
    expect(await q("SELECT worker FROM run_events WHERE run_id = $1 AND type = 'review.marked_done'", [runId])).toEqual([{ worker: "user:sam@acme.test" }]);

    await page.goto(`${d.web.base}/?status=needs_review`);
    expect(await page.locator(`tr[data-run="${runId}"]`).count()).toBe(0);
  });
});
