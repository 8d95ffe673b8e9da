import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createLogger, lanes } from "@holdfast/core/base";
import { GraphCache, parseGraph } from "@holdfast/core/versions";
import { upsertMember } from "@holdfast/core/people";
import { requestCancel, StepRunner } from "@holdfast/core/run";
import {
  createTestDatabase,
  type HttpTarget,
  launchChromium,
  publish,
  repoRoot,
  signInPage,
  startHttpTarget,
  startTestRun,
  startWeb,
  type TestDatabase,
  type WebServer,
} from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A run cancelled while its CRM call's outcome was unknown (the CRM answered 502) is in the runs list's "needs
 * review" filter; its page says the call may or may not have happened and asks what Sam found; his answer takes the
 * run off the list. Screenshot: e2e/artifacts/needs-review-cancelled.png.
 */
let t: TestDatabase;
let target: HttpTarget;
let web: WebServer;
let browser: Browser;
let orgId = "";
const graphs = new GraphCache();
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
const artifacts = join(repoRoot, "e2e/artifacts");

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  t = await createTestDatabase();
  target = await startHttpTarget();
  target.behave({ failFirst: 1_000, failStatus: 502 });
  orgId = (
    await publish(
      t.db,
      parseGraph({
        nodes: [
          { id: "start", kind: "trigger", config: { eventIdField: "id" } },
          { id: "update_crm", kind: "http_request", config: { url: target.url, maxAttempts: 5 } },
          { id: "done", kind: "end" },
        ],
        edges: [
          { from: "start", to: "update_crm" },
          { from: "update_crm", to: "done" },
        ],
      }),
      { automation: "crm-sync" },
    )
  ).orgId;
  await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: "correct horse battery", role: "editor" });
  web = await startWeb({ DATABASE_URL: t.url });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await target?.close();
  await t?.drop();
});

describe("a cancelled run whose call's outcome was unknown", () => {
  it("is listed as needs review, its page asks what was found, and the answer takes it off the list", async () => {
    const runId = await startTestRun(t.db, "crm-sync", { id: "evt-502", email: "maya@example.com" });
    const [step] = await q("SELECT id FROM steps WHERE run_id = $1", [runId]);
    await new StepRunner({ db: t.db, graphs, worker: "w", lane: lanes.io, log: createLogger("test", "silent") }).run(step.id);
    expect(await q("SELECT status FROM effects WHERE run_id = $1", [runId])).toEqual([{ status: "outcome_unknown" }]);
    await requestCancel(t.db, graphs, orgId, runId, "wrong list", "user:sam@acme.test");

    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await signInPage(page, web.base, "sam@acme.test", "correct horse battery");
    await page.goto(`${web.base}/?status=needs_review`);
    await expect.poll(() => page.locator(`tr[data-run="${runId}"]`).count()).toBe(1);
    expect(await page.locator(`tr[data-run="${runId}"]`).textContent()).toContain("needs_review");

    await page.goto(`${web.base}/runs/${runId}`);
    const summary = page.locator("section.summary");
    expect(await summary.getAttribute("data-state")).toBe("needs_review");
    expect(await page.locator("[data-status-sentence]").textContent()).toMatch(/Cancelled by sam@acme\.test.*the call at .*"update_crm" may or may not have happened/);
    const form = page.locator(`[data-review-stopped="${runId}/update_crm/1"]`);
    await form.locator("textarea[name=note]").fill("The CRM shows Maya's record updated at 10:02");
    await page.screenshot({ path: join(artifacts, "needs-review-cancelled.png"), fullPage: true });
    await form.getByRole("button", { name: "It happened" }).click();
    await page.getByText("Recorded: it happened, with your note.").waitFor();
    expect(await page.locator("section.summary").getAttribute("data-state")).toBe("cancelled");
    expect(await page.locator(`[data-review-stopped]`).count()).toBe(0);
    expect(await q("SELECT status, result->>'note' AS note FROM effects WHERE run_id = $1", [runId])).toEqual([
      { status: "settled", note: "The CRM shows Maya's record updated at 10:02" },
    ]);
    expect(await q("SELECT worker FROM run_events WHERE run_id = $1 AND type = 'review.marked_done'", [runId])).toEqual([{ worker: "user:sam@acme.test" }]);

    await page.goto(`${web.base}/?status=needs_review`);
    expect(await page.locator(`tr[data-run="${runId}"]`).count()).toBe(0);
  });
});
