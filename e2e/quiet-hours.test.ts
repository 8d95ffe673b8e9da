import { parseGraph } from "@holdfast/core/versions";
import { addMember, publish, screenshots, signedInPage, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectStep } from "./fixtures/editor";

/**
 * Quiet hours in Chromium (issue 44): the owner sets the organisation's hours in Settings (a preview sentence as the
 * form is filled in, a window that closes before it opens refused in words), then gives one automation no quiet hours
 * and another its own; a viewer and an editor read the sentences and have no form. Screenshots: e2e/artifacts/quiet-hours-*.png.
 */
let d: TestDeployment;
let browser: Browser;
let page: Page;
let orgId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shots = screenshots("quiet-hours");

const mailGraph = parseGraph({
  nodes: [
    { id: "form", kind: "trigger", config: { eventIdField: "id", contactEmailField: "email" } },
    { id: "send", kind: "send_email", config: { connection: "mailbox", subject: "Hi", text: "Hello" } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "form", to: "send" },
    { from: "send", to: "done" },
  ],
});

beforeAll(async () => {
  d = await startTestDeployment();
  orgId = (await publish(d.t.db, mailGraph, { automation: "receipts" })).orgId;
  await publish(d.t.db, mailGraph, { automation: "newsletter" });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "owner");
  await addMember(d.t.db, orgId, "vic@acme.test", "Vic", "viewer");
  await addMember(d.t.db, orgId, "eve@acme.test", "Eve", "editor");
  await d.startWeb({ LOG_LEVEL: "warn" });
  browser = await d.launchBrowser();
  page = await signedInPage(browser, d.web.base, "sam@acme.test", { viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
}, 300_000);

afterAll(async () => d?.stop());

const automationId = async (slug: string) => (await q("SELECT id FROM automations WHERE org_id = $1 AND slug = $2", [orgId, slug]))[0]?.id as string;

describe("quiet hours in Chromium", () => {
  it("the owner sets the organisation's quiet hours in Settings, with a preview; a backwards window is refused in words", async () => {
    await page.goto(`${d.web.base}/settings`);
    const section = page.locator("section.quiet-hours");
    await expect.poll(() => section.locator("[data-quiet-now]").textContent()).toContain("No quiet hours: emails go out whenever a run reaches its send step.");
    await section.getByLabel("Only at these hours").check();
    // Mon-Fri 08:00-20:00 is offered; the owner makes it Mon-Sat 08:00-19:30, spread over 20 minutes.
    await section.getByLabel("Sat").check();
    await section.getByLabel("To", { exact: true }).fill("19:30");
    await section.getByLabel("Spread held emails over (minutes)").fill("20");
    const preview = section.locator("[data-quiet-preview]");
    await expect.poll(() => preview.textContent()).toBe(
      "Emails go out Mon-Sat from 08:00 to 19:30 in each contact's time zone (UTC when the contact has none). An email due outside those hours waits for the next opening, spread over the window's first 20 minutes so they do not all leave at once.",
    );
    // A window that closes before it opens: the preview and the save both say what is wrong; nothing is saved.
    await section.getByLabel("To", { exact: true }).fill("07:00");
    await expect.poll(() => preview.getAttribute("data-quiet-preview")).toBe("error");
    expect(await preview.textContent()).toMatch(/^The window must open before it closes on the same day \(such as 08:00 to 20:00\)/);
    await section.getByRole("button", { name: "Save quiet hours" }).click();
    await section.locator('[data-flash="error"]').waitFor();
    expect(await section.locator('[data-flash="error"]').textContent()).toMatch(/must open before it closes/);
    expect(await q("SELECT quiet_hours FROM sending_rules WHERE org_id = $1", [orgId])).toEqual([]);
    await section.getByLabel("To", { exact: true }).fill("19:30");
    await section.getByRole("button", { name: "Save quiet hours" }).click();
    await section.locator('[data-flash="ok"]').waitFor();
    expect(await section.locator('[data-flash="ok"]').textContent()).toMatch(/^Quiet hours saved\. Emails go out Mon-Sat from 08:00 to 19:30/);
    expect(await q("SELECT quiet_hours, updated_by FROM sending_rules WHERE org_id = $1", [orgId])).toEqual([
      { quiet_hours: { days: [1, 2, 3, 4, 5, 6], start: "08:00", end: "19:30", spreadMinutes: 20 }, updated_by: "user:sam@acme.test" },
    ]);
    await expect.poll(() => section.locator("[data-quiet-now]").textContent()).toMatch(/^Emails go out Mon-Sat from 08:00 to 19:30 .*\(changed by sam@acme\.test on /);
    // Saving the same again changes nothing and says so.
    await section.getByRole("button", { name: "Save quiet hours" }).click();
    await expect.poll(() => section.locator('[data-flash="ok"]').textContent()).toMatch(/^Nothing changed\./);
    await shots(section, "settings");
  });

  it("an automation uses the organisation's hours, none, or its own; the words read back", async () => {
    const receipts = await automationId("receipts");
    await page.goto(`${d.web.base}/automations/${receipts}`);
    await selectStep(page, "form");
    const own = page.locator("section.quiet-hours-override");
    await expect.poll(() => own.locator("[data-quiet-now]").textContent()).toMatch(/^Emails go out Mon-Sat from 08:00 to 19:30/);
    expect(await own.getByLabel("Use the organisation's quiet hours (Mon-Sat 08:00-19:30)").isChecked()).toBe(true);
    await own.getByLabel("No quiet hours for this automation").check();
    await own.getByRole("button", { name: "Save quiet hours" }).click();
    await expect.poll(() => own.locator('[data-flash="ok"]').textContent()).toBe(
      "Saved: this automation uses no quiet hours. No quiet hours: emails go out whenever a run reaches its send step.",
    );
    expect(await q("SELECT quiet_hours FROM automations WHERE id = $1", [receipts])).toEqual([{ quiet_hours: { off: true } }]);
    await expect.poll(() => own.locator("[data-quiet-now]").textContent()).toMatch(/^No quiet hours/);

    const newsletter = await automationId("newsletter");
    await page.goto(`${d.web.base}/automations/${newsletter}`);
    await selectStep(page, "form");
    await own.getByLabel("Custom hours for this automation").check();
    for (const day of ["Mon", "Wed", "Fri", "Sat"]) await own.getByLabel(day, { exact: true }).setChecked(false);
    await own.getByLabel("From", { exact: true }).fill("10:00");
    await own.getByLabel("To", { exact: true }).fill("16:00");
    await own.getByLabel("Spread held emails over (minutes)").fill("0");
    await own.getByRole("button", { name: "Save quiet hours" }).click();
    await expect.poll(() => own.locator("[data-quiet-now]").textContent()).toBe(
      "Emails go out Tue, Thu from 10:00 to 16:00 in each contact's time zone (UTC when the contact has none). An email due outside those hours waits for the next opening.",
    );
    expect(await q("SELECT quiet_hours FROM automations WHERE id = $1", [newsletter])).toEqual([{ quiet_hours: { days: [2, 4], start: "10:00", end: "16:00", spreadMinutes: 0 } }]);
    await shots(own, "automation");
  });

  it("a viewer reads Settings' sentence with no form; an editor reads the automation's with no form", async () => {
    const vic = await signedInPage(browser, d.web.base, "vic@acme.test", { viewport: { width: 1280, height: 900 } });
    await vic.goto(`${d.web.base}/settings`);
    const section = vic.locator("section.quiet-hours");
    await expect.poll(() => section.locator("[data-quiet-now]").textContent()).toMatch(/^Emails go out Mon-Sat from 08:00 to 19:30/);
    expect(await section.getByText("Only owners change quiet hours.").count()).toBe(1);
    expect(await section.locator("form").count()).toBe(0);
    await vic.context().close();
    // A viewer opens no step's panel; an editor does (to edit the journey), and reads the automation's quiet hours.
    const eve = await signedInPage(browser, d.web.base, "eve@acme.test", { viewport: { width: 1280, height: 900 } });
    await eve.goto(`${d.web.base}/automations/${await automationId("receipts")}`);
    const own = eve.locator("section.quiet-hours-override");
    // A click made before the page hydrated selects nothing: click again until the step's panel opens.
    await expect
      .poll(
        async () => {
          await selectStep(eve, "form");
          return own.count();
        },
        { timeout: 20_000 },
      )
      .toBe(1);
    await expect.poll(() => own.locator("[data-quiet-now]").textContent()).toMatch(/^No quiet hours/);
    expect(await own.getByText("Only owners change an automation's quiet hours.").count()).toBe(1);
    expect(await own.locator("form").count()).toBe(0);
    await shots(own, "editor-automation");
    await eve.context().close();
  });
});
