import { createConnection } from "@holdfast/core/providers";
import { organisationWithOwner, type SmtpTarget, screenshots, signedInPage, startSmtpTarget, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addStepAfter, canvasStep, pickVariable, saved, selectStep, stepField } from "./fixtures/editor";

/**
 * Issue 41: a marketer builds the story's start with declared fields only, before any delivery. The trigger's form
 * declares what the form sends (email, name, company, time zone, with examples); the new wait counts in the declared
 * zone field; the email's subject and text get {{input.company}} and {{contact.name}} from the variable picker (no
 * expression typed by hand); Publish; one form post; the lead's name and company are on the contact, in the database
 * and on Settings -> Contacts.
 */
let d: TestDeployment;
let browser: Browser;
let smtp: SmtpTarget;
let orgId: string;
const shot = screenshots("declared-fields");
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  orgId = await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  smtp = d.closeAtStop(await startSmtpTarget());
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "olivia@acme.test" }, secret: null });
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => d?.stop());


/**
 * Adds a declared field row and fills it: name, example, and what it is (its type follows a role that has one). The
 * last edit's save is answered first: its problems, shown or cleared above the button, would move it mid-click.
 */
async function declare(page: Page, row: number, name: string, example: string, role: string): Promise<void> {
  const table = stepField(page, "fields");
  await saved(page);
  await table.getByRole("button", { name: "+ Add field" }).click();
  const nameInput = table.locator(`input[name="fields.${row}.name"]`);
  await nameInput.waitFor();
  await table.locator(`select[name="fields.${row}.role"]`).selectOption(role);
  await nameInput.fill(name);
  await table.locator(`input[name="fields.${row}.example"]`).fill(example);
}

describe("declared fields and contact attributes", () => {
  it("builds the story's start with declared fields only, picks variables, publishes, and one form post fills the contact", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1500, height: 1000 } });
    page.on("pageerror", (e) => console.log("pageerror:", e.message));

    await page.goto(`${d.web.base}/automations`);
    await page.fill('input[name="automation-name"]', "Lead follow-up");
    await page.click('button:has-text("Create")');
    await page.waitForURL(/\/automations\/aut_[0-9a-f]{32}\?org=acme/);
    const automationId = /aut_[0-9a-f]{32}/.exec(page.url())?.[0] as string;
    await canvasStep(page, "trigger").waitFor();

    // 1. The trigger declares the form's fields. The first row offered is the contact's email (with an example).
    await selectStep(page, "trigger");
    // The form tool sends its submission's id as "id" (a re-sent submission starts no second run).
    await stepField(page, "eventIdField").locator("input").fill("id");
    // Before any field is declared, the by-hand zone path's placeholder names an example zone, not "email".
    const zonePlaceholder = await stepField(page, "contactTimeZoneField").locator("input").getAttribute("placeholder");
    expect(zonePlaceholder).toContain("Europe/Berlin");
    expect(zonePlaceholder).not.toContain("email");
    const table = stepField(page, "fields");
    await saved(page);
    await table.getByRole("button", { name: "+ Add field" }).click();
    expect(await table.locator('input[name="fields.0.name"]').inputValue()).toBe("email");
    expect(await table.locator('select[name="fields.0.role"]').inputValue()).toBe("email");
    await declare(page, 1, "full_name", "Maya Lopez", "name");
    await declare(page, 2, "company", "Lumen", "company");
    await declare(page, 3, "timezone", "America/New_York", "time_zone");
    expect(await table.locator('select[name="fields.3.type"]').inputValue()).toBe("time_zone");
    // The by-hand paths give way to the roles.
    expect(await stepField(page, "contactTimeZoneField").count()).toBe(0);
    await page.waitForSelector(".save-state.save-saved");
    await shot(page, "1-trigger-fields");

    // 2. A wait after the trigger counts in the declared time-zone field (the contact's zone), not Europe/Berlin.
    await addStepAfter(page, "trigger", "wait", "wait");
    expect(await stepField(page, "zoneFrom").locator("input").inputValue()).toBe("input.timezone");
    expect(await stepField(page, "zone").locator("input").inputValue()).toBe("");
    await expect.poll(() => page.locator('[data-testid="rule-sentence"]').textContent()).toBe("Wait until 09:00 on the next weekday in the contact's time zone (input.timezone).");

    // 3. The email: plain words typed, the variables picked (offered before any delivery, with their examples).
    await addStepAfter(page, "wait", "send_email", "send_email");
    await stepField(page, "connection").locator("select").selectOption("mail");
    const subject = stepField(page, "subject").locator("input");
    await subject.fill("A question from ");
    await subject.press("End");
    await stepField(page, "subject").getByRole("button", { name: /Insert variable/ }).click();
    const option = stepField(page, "subject").locator('.var-option[data-path="input.company"]');
    expect(await option.textContent()).toContain("e.g. Lumen");
    await shot(page, "2-picker-before-delivery");
    await page.keyboard.press("Escape");
    await pickVariable(stepField(page, "subject"), "input.company");
    await expect.poll(() => subject.inputValue()).toBe("A question from {{input.company}}");
    const text = stepField(page, "text").locator("textarea");
    await text.fill("Hello ");
    await text.press("End");
    await pickVariable(stepField(page, "text"), "contact.name");
    await expect.poll(() => text.inputValue()).toBe("Hello {{contact.name}}");
    await page.waitForSelector(".save-state.save-saved");
    await page.waitForTimeout(800);
    await expect.poll(() => page.locator(".problems-count").textContent(), { timeout: 15_000 }).toBe("No problems");

    // No delivery before publishing: no delivery row, no stored sample.
    expect(await q("SELECT count(*)::int AS n FROM trigger_deliveries WHERE automation_id = $1", [automationId])).toEqual([{ n: 0 }]);
    expect(await q("SELECT sample_input FROM automations WHERE id = $1", [automationId])).toEqual([{ sample_input: null }]);

    // 4. Publish.
    await page.locator("button.primary", { hasText: "Publish" }).click();
    await page.waitForSelector("text=Published version 1.");
    const [v1] = await q("SELECT graph FROM automation_versions WHERE automation_id = $1 AND version = 1", [automationId]);
    const byId = Object.fromEntries(v1.graph.nodes.map((n: { id: string; config: unknown }) => [n.id, n]));
    expect(byId.trigger.config.fields).toEqual([
      { name: "email", type: "email", example: "maya@example.com", role: "email" },
      { name: "full_name", type: "text", example: "Maya Lopez", role: "name" },
      { name: "company", type: "text", example: "Lumen", role: "company" },
      { name: "timezone", type: "time_zone", example: "America/New_York", role: "time_zone" },
    ]);
    expect(byId.wait.config).toMatchObject({ rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.timezone" });
    expect(byId.wait.config.zone).toBeUndefined();
    expect(byId.send_email.config).toMatchObject({ to: "{{contact.email}}", subject: "A question from {{input.company}}", text: "Hello {{contact.name}}" });
    await shot(page, "3-published");

    // 5. One form post to the URL-token address.
    await selectStep(page, "trigger");
    await page.selectOption('select[name="trigger-mode"]', "url_token");
    await expect.poll(() => page.locator('input[name="trigger-url"]').inputValue()).toMatch(/\/api\/hooks\/acme\/lead-follow-up\/[A-Za-z0-9_-]{40,}$/);
    const url = await page.locator('input[name="trigger-url"]').inputValue();
    const delivered = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ id: "form_1", email: "Ann@Example.com", full_name: "Ann Example", company: "Northwind", timezone: "Europe/Madrid" }).toString(),
    });
    if (delivered.status !== 202) console.log("delivery:", delivered.status, await delivered.clone().text());
    expect(delivered.status).toBe(202);
    const { runId } = (await delivered.json()) as { runId: string };

    // The lead's name and company are on the contact (and its zone), linked to the run.
    const [contact] = await q("SELECT id, time_zone, attributes FROM contacts WHERE org_id = $1 AND email = 'ann@example.com'", [orgId]);
    expect(contact).toMatchObject({ time_zone: "Europe/Madrid", attributes: { name: "Ann Example", company: "Northwind" } });
    expect(await q("SELECT contact_id FROM runs WHERE id = $1", [runId])).toEqual([{ contact_id: contact.id }]);
    const [timer] = await q("SELECT zone FROM timers WHERE run_id = $1", [runId]);
    if (timer) expect(timer.zone).toBe("Europe/Madrid");

    // 6. Settings -> Contacts shows them, and an editor can change them.
    await page.goto(`${d.web.base}/settings`);
    const row = page.locator("tr", { has: page.getByRole("button", { name: "View ann@example.com" }) });
    await expect.poll(() => row.locator("[data-contact-name]").textContent()).toBe("Ann Example, Northwind");
    await page.getByRole("button", { name: "View ann@example.com" }).click();
    const view = page.locator(".contact-view");
    await expect.poll(() => view.locator('input[data-attribute="name"]').inputValue()).toBe("Ann Example");
    expect(await view.locator('input[data-attribute="company"]').inputValue()).toBe("Northwind");
    await view.locator('input[data-attribute="company"]').fill("Northwind Traders");
    await view.getByRole("button", { name: "Save name and fields" }).click();
    await view.locator('[data-flash="ok"]').waitFor();
    expect((await q("SELECT attributes FROM contacts WHERE id = $1", [contact.id]))[0].attributes).toEqual({ name: "Ann Example", company: "Northwind Traders" });
    // biome-ignore lint/performance/useDomNodeTextContent: the visible text only (textContent also reads the page's scripts)
    const pageText = await page.innerText("body");
    for (const word of ["undefined", "[object Object]", "Prisma"]) {
      const at = pageText.indexOf(word);
      expect(at === -1 ? "" : pageText.slice(Math.max(0, at - 120), at + 40)).toBe("");
    }
    await shot(page, "4-settings-contact");
    await page.close();
  });
});
