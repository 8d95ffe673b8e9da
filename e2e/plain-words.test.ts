import { createLogger, lanes } from "@holdfast/core/base";
import { GraphCache, parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { StepRunner } from "@holdfast/core/run";
import { changeLifecycle } from "@holdfast/core/run";
import { addMember, lineGraph, publish, screenshots, signedInPage, startCrmTarget, startTestDeployment, startTestRun, type TestDeployment } from "@holdfast/testkit";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Plain words and defaults that do not stop runs in silence (issue 41, items 4-6), in Chromium through the built web
 * app: a run held by its paused automation reads Held on the runs list, its page and the automations' counts; a
 * connection whose calls are paused after failures says so with the time it tries again (no engine words); the model
 * budget page states the default monthly budget and model prices in dollars per million tokens; the approval step's
 * form offers the organisation's members. No page visited shows an engine or library word outside Details.
 */
let d: TestDeployment;
let page: Page;
let heldRun = "";
let pausedRun = "";
let approvalAutomation = "";
const shot = screenshots("plain-words");
const forbidden = /breaker|probe|digest|start key|sha256|prisma|µ|undefined|\[object Object\]/i;

/** The page's text without what is under a <details> disclosure (and without scripts and styles). */
const visibleText = (p: Page): Promise<string> =>
  p.evaluate(`(() => {
    const body = document.body.cloneNode(true);
    for (const el of body.querySelectorAll("details, script, style, noscript, template")) el.remove();
    return body.textContent ?? "";
  })()`);

async function plain(p: Page, where: string): Promise<string> {
  const text = await visibleText(p);
  expect(text.match(forbidden)?.[0], `${where}: "${text.match(new RegExp(`.{0,60}${forbidden.source}.{0,60}`, "i"))?.[0]}"`).toBeUndefined();
  return text;
}

beforeAll(async () => {
  d = await startTestDeployment();
  const crm = d.closeAtStop(await startCrmTarget(["crm-token"]));
  crm.behave({ failFirst: 1_000, failStatus: 500 });
  const trigger = { id: "t", kind: "trigger", config: { eventIdField: "id" } };
  const sync = { id: "sync", kind: "crm_upsert", config: { connection: "CRM", object: "leads", matchKey: "lead-{{input.id}}", fields: { id: "{{input.id}}" } } };
  const orgId = (await publish(d.t.db, lineGraph(trigger, sync, { id: "e", kind: "end" }), { automation: "crm-sync" })).orgId;
  const later = { id: "later", kind: "wait", config: { rule: { kind: "duration", seconds: 86_400 } } };
  const slow = await publish(d.t.db, lineGraph(trigger, later, { id: "e", kind: "end" }), { automation: "slow-burn" });
  approvalAutomation = (
    await publish(
      d.t.db,
      parseGraph({
        nodes: [
          { id: "t", kind: "trigger", config: { eventIdField: "id" } },
          { id: "review", kind: "approval", config: { approvers: { users: [] , role: "approver" }, title: "Send it?", content: "Hello", deadlineSeconds: 3600 } },
          { id: "yes", kind: "end" },
          { id: "no", kind: "end" },
        ],
        edges: [
          { from: "t", to: "review" },
          { from: "review", to: "yes", label: "approved" },
          { from: "review", to: "no", label: "rejected" },
        ],
      }),
      { automation: "ask-first" },
    )
  ).automationId;
  // One failed call pauses calls to the CRM for 10 minutes.
  await createConnection(d.t.db, {
    orgId,
    kind: "crm",
    name: "CRM",
    config: { baseUrl: crm.baseUrl },
    secret: "crm-token",
    limits: { breaker: { failureRate: 1, minCalls: 1, windowMs: 60_000, coolDownMs: 600_000 } },
  });
  await createConnection(d.t.db, {
    orgId,
    kind: "model",
    name: "writer",
    config: { baseUrl: "https://models.example.com/v1", model: "gpt-4o-mini", inputMicrosPerMTok: 150_000, outputMicrosPerMTok: 600_000 },
    secret: "sk-test",
  });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam Owner", "owner");
  await addMember(d.t.db, orgId, "ana@acme.test", "Ana Approver", "approver");

  // A run of the slow automation, held by pausing it with its runs held (the real lifecycle change).
  heldRun = await startTestRun(d.t.db, "slow-burn", { id: "held-1", email: "maya@example.com" });
  const paused = await changeLifecycle(d.t.db, { orgId, automationId: slow.automationId, change: { action: "pause", mode: "hold", runs: "hold" }, by: "user:sam@acme.test" });
  expect(paused.heldRuns).toBe(1);

  // A run whose CRM call fails: the first failure pauses the CRM's calls and the step waits on it (a real worker).
  pausedRun = await startTestRun(d.t.db, "crm-sync", { id: "lead-1", email: "lee@example.com" });
  const runner = new StepRunner({ db: d.t.db, graphs: new GraphCache(), worker: "e2e", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log: createLogger("test", "silent") });
  const [step] = (await d.t.sql.query("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'sync'", [pausedRun])).rows;
  await runner.run(step.id);
  const parked = (await d.t.sql.query("SELECT status, error->>'code' AS code FROM steps WHERE id = $1", [step.id])).rows[0];
  expect(parked).toEqual({ status: "parked", code: "breaker_open" });

  await d.startWeb();
  page = await signedInPage(await d.launchBrowser(), d.web.base, "sam@acme.test", { viewport: { width: 1280, height: 800 } });
}, 180_000);

afterAll(async () => d?.stop());

describe("plain words in Chromium", () => {
  it("a held run reads Held on the runs list, its page and the automations' counts", async () => {
    await page.goto(`${d.web.base}/`);
    const row = page.locator(`tr[data-run="${heldRun}"]`);
    await row.waitFor();
    expect(await row.locator("[data-run-status]").textContent()).toBe("Held: the automation is paused (runs held)");
    await plain(page, "runs list");

    await page.goto(`${d.web.base}/runs/${heldRun}`);
    expect(await page.locator("h1 [data-run-status]").textContent()).toBe("Held: the automation is paused (runs held)");
    const summary = page.locator("section.summary");
    expect(await summary.getAttribute("data-state")).toBe("held");
    expect(await summary.textContent()).toContain("Held: the automation is paused (runs held): it takes no next step until the automation is resumed");
    await plain(page, "held run page");

    await page.goto(`${d.web.base}/automations?org=acme`);
    const held = page.locator("[data-held]");
    await held.waitFor();
    expect(await held.textContent()).toBe("1 held: the automation is paused (runs held)");
    await plain(page, "automations list");
  });

  it("a connection whose calls are paused says so in words, with when it tries again", async () => {
    await page.goto(`${d.web.base}/runs/${pausedRun}`);
    const summary = page.locator("section.summary");
    expect(await summary.getAttribute("data-state")).toBe("parked");
    expect(await summary.textContent()).toMatch(/calls to "CRM" are paused after 1 failed call in a row within 60 seconds; trying again at \S/);
    await shot(page, "paused-calls");
    await plain(page, "paused run page");
  });

  it("the model budget page states the default monthly budget and prices in dollars per million tokens", async () => {
    await page.goto(`${d.web.base}/settings?org=acme`);
    const budget = page.locator("section.model-budget");
    await budget.getByTestId("budget-allowed").waitFor();
    expect(await budget.getByTestId("budget-allowed").textContent()).toBe("$20.00 a month");
    const writer = budget.locator('tr[data-model-connection="writer"]');
    expect(await writer.locator("td").nth(1).textContent()).toBe("$0.15 per million tokens");
    expect(await writer.locator("td").nth(2).textContent()).toBe("$0.60 per million tokens");
    await shot(budget, "model-budget");
    await plain(page, "settings");
  });

  it("the approval step's form offers the organisation's members", async () => {
    await page.goto(`${d.web.base}/automations/${approvalAutomation}?org=acme`);
    await page.locator('.react-flow__node[data-id="review"]').click();
    const approvers = page.locator('form.step-form .form-field[data-field="approvers"]');
    await approvers.waitFor();
    const offered = await approvers.locator("label.check").allTextContents();
    expect(offered.some((l) => l.includes("Ana Approver") && l.includes("ana@acme.test"))).toBe(true);
    expect(offered.some((l) => l.includes("Sam Owner"))).toBe(true);
    await approvers.getByLabel(/Ana Approver/).check();
    expect(await approvers.getByLabel(/Ana Approver/).isChecked()).toBe(true);
    await plain(page, "editor");
  });
});
