import { goalSettings, signPayload } from "@holdfast/core/run";
import { addMember, lineGraph, productProcesses, publish, screenshots, signedInPage, startTestDeployment, startTestRun, type TestDeployment } from "@holdfast/testkit";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Sam gives an automation a goal (issue 43 item 5) on its page in Chromium, against the built web app with the real
 * relay, engine and lane worker: chooses "a goal event arrives", the page shows the goal URL; a CRM's signed goal
 * event for Maya ends her waiting run as converted (Kim's goes on), an unsigned one is refused with 401; the page
 * shows the conversion rate per version. Screenshots: e2e/artifacts/goals-*.png.
 */
let d: TestDeployment;
let page: Page;
const ids: Record<string, string> = {};
const shots = screenshots("goals");

const waiting = lineGraph(
  { id: "start", kind: "trigger", config: { eventIdField: "id" } },
  { id: "cool_off", kind: "wait", config: { rule: { kind: "duration", seconds: 86_400 } } },
  { id: "done", kind: "end" },
);

beforeAll(async () => {
  d = await startTestDeployment();
  const a = await publish(d.t.db, waiting, { automation: "onboarding" });
  ids.org = a.orgId;
  ids.onboarding = a.automationId;
  await addMember(d.t.db, a.orgId, "sam@acme.test", "Sam", "editor");
  const web = await d.startWeb();
  await d.startApps(productProcesses({}, { sweeper: false }));
  page = await signedInPage(await d.launchBrowser(), web.base, "sam@acme.test", { viewport: { width: 1400, height: 1000 } });
});

afterAll(async () => d?.stop());

async function sendGoal(body: unknown, signed: boolean) {
  const raw = JSON.stringify(body);
  const id = `crm_${Math.random().toString(36).slice(2)}`;
  const at = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { "content-type": "application/json", "webhook-id": id };
  if (signed) {
    const secret = (await goalSettings(d.t.db, ids.org as string, ids.onboarding as string)).signingSecret as string;
    Object.assign(headers, { "webhook-timestamp": String(at), "webhook-signature": signPayload(secret, id, at, raw) });
  }
  return fetch(`${d.web.base}/api/goals/acme/onboarding`, { method: "POST", headers, body: raw });
}

describe("an automation's goal in the browser", () => {
  it("sets the goal in plain words, a goal event ends the contact's run as converted, and the page shows conversion per version", async () => {
    const maya = await startTestRun(d.t.db, "onboarding", { id: "o1", email: "maya@example.com" });
    const kim = await startTestRun(d.t.db, "onboarding", { id: "o2", email: "kim@example.com" });

    await page.goto(`${d.web.base}/automations/${ids.onboarding}`);
    const goal = page.locator("details.goal-panel");
    await expect.poll(() => goal.locator("summary").textContent()).toContain("Goal: none");
    await goal.locator("summary").click();
    await goal.getByLabel("A goal event arrives for the contact", { exact: false }).check();
    await goal.getByRole("button", { name: "Save goal" }).click();
    await expect.poll(() => goal.locator("[role=status]").textContent()).toContain("a run converts when a goal event arrived for the contact");
    await expect.poll(() => goal.locator("[data-goal-url]").textContent()).toBe(`${d.web.base}/api/goals/acme/onboarding`);
    expect(await d.q("SELECT goal FROM automations WHERE id = $1", [ids.onboarding])).toEqual([{ goal: "event" }]);
    await shots(page, "form");

    const refused = await sendGoal({ email: "maya@example.com" }, false);
    expect(refused.status).toBe(401);
    const accepted = await sendGoal({ email: "maya@example.com", event: "became a customer" }, true);
    expect(accepted.status).toBe(202);
    await expect.poll(async () => (await d.q("SELECT status FROM runs WHERE id = $1", [maya]))[0]?.status).toBe("converted");
    expect(await d.q("SELECT status, goal_met FROM runs WHERE id = $1", [kim])).toEqual([{ status: "running", goal_met: null }]);

    await page.reload();
    await page.locator("details.goal-panel summary").click();
    const row = page.locator('table.conversion tr[data-version="1"]');
    await expect.poll(() => row.locator("td").allTextContents()).toEqual(["1", "2", "1", "50%"]);
    await expect.poll(() => page.locator("details.goal-panel summary").textContent()).toContain("converted 50% on version 1");
    await shots(page, "conversion");

    // The goal secret leaked: a new one (asked first); the previous one works for 24 hours, until it is stopped; the
    // new one meets the goal.
    const panel = page.locator("details.goal-panel");
    page.on("dialog", (dialog) => void dialog.accept());
    await panel.getByRole("button", { name: "New secret…" }).click();
    await expect.poll(() => panel.textContent()).toContain("New signing secret made. The previous one is accepted for 24 more hours.");
    await expect.poll(() => panel.textContent()).toContain("The previous secret works until");
    expect(await d.q("SELECT count(*)::int AS n FROM trigger_credentials WHERE automation_id = $1 AND kind = 'goal_signing_secret'", [ids.onboarding])).toEqual([{ n: 2 }]);
    await panel.getByRole("button", { name: "Stop accepting it now" }).click();
    await expect.poll(() => panel.textContent()).toContain("The previous secret no longer works.");
    await expect.poll(() => panel.getByRole("button", { name: "Stop accepting it now" }).count()).toBe(0);
    expect((await sendGoal({ email: "kim@example.com" }, true)).status).toBe(202);

    // The run's page says it converted, and why.
    await page.goto(`${d.web.base}/runs/${maya}`);
    await expect.poll(() => page.locator("body").textContent()).toContain("Converted: the automation's goal was met");
    await shots(page, "run");
  });
});
