import { createConnection } from "@holdfast/core/providers";
import { getDraft, saveDraft } from "@holdfast/core/run";
import { createAutomation } from "@holdfast/core/versions";
import { inTx } from "@holdfast/db";
import {
  organisationWithOwner,
  productProcesses,
  screenshots,
  signedInPage,
  type SmtpTarget,
  startSmtpTarget,
  startTestDeployment,
  startTestRun,
  type TestDeployment,
  waitFor,
} from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canvasStep, saved, selectStep, stepField } from "./fixtures/editor";

/**
 * Saved emails (issue 44) in Chromium: Olivia writes one on Automations -> Saved emails (a malformed {{ and a taken
 * name are refused in words), fills two send steps of an automation from it in the editor, keeps a step's text as
 * another saved email, publishes with no problems; a run through the real lane worker sends the saved email's
 * rendered subject and message twice to the SMTP sink. Changing the saved email afterwards changes neither the
 * published version nor what it sends; the step says its saved email changed since.
 */
let d: TestDeployment;
let browser: Browser;
let smtp: SmtpTarget;
let orgId = "";
let automationId = "";
const shot = screenshots("saved-emails");
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

const send = (id: string, x: number) => ({ id, kind: "send_email", config: { connection: "mail", to: "{{contact.email}}", subject: "", text: "" }, position: { x, y: 0 } });
const graph = {
  nodes: [{ id: "signup", kind: "trigger", config: { eventIdField: "id" }, position: { x: 0, y: 0 } }, send("welcome", 280), send("welcome_again", 560), { id: "done", kind: "end", position: { x: 840, y: 0 } }],
  edges: [
    { from: "signup", to: "welcome" },
    { from: "welcome", to: "welcome_again" },
    { from: "welcome_again", to: "done" },
  ],
};

beforeAll(async () => {
  d = await startTestDeployment();
  orgId = await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  smtp = d.closeAtStop(await startSmtpTarget());
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "olivia@acme.test" }, secret: null });
  ({ id: automationId } = await inTx(d.t.db, (tx) => createAutomation(tx, { orgId, slug: "signup", name: "Signup welcome" })));
  await saveDraft(d.t.db, orgId, automationId, graph, (await getDraft(d.t.db, orgId, automationId)).revision, "test");
  await d.startWeb({ WAKEUPS: "poll" });
  await d.startApps(productProcesses({ io: {} }, { sweeper: false }), 90_000);
  browser = await d.launchBrowser();
});
afterAll(async () => d?.stop());

const form = (page: Page) => page.locator("form.saved-email-form");

/** Fills the saved email form and presses Save; returns nothing (the caller reads what came of it). */
async function fillSavedEmail(page: Page, e: { name: string; subject: string; text: string }) {
  await form(page).getByLabel("Name", { exact: true }).fill(e.name);
  await form(page).getByLabel("Subject", { exact: true }).fill(e.subject);
  await form(page).getByLabel("Message", { exact: true }).fill(e.text);
  await form(page).getByRole("button", { name: /^Save/ }).click();
}

/** In the open send step: Use a saved email -> `name` -> Use this email. */
async function useSavedEmail(page: Page, name: string) {
  const picker = page.getByTestId("saved-email-picker");
  await picker.getByLabel("Use a saved email").selectOption({ label: name });
  await picker.getByRole("button", { name: "Use this email" }).click();
  await expect.poll(() => picker.locator(".saved-email-origin").textContent()).toBe(`From the saved email “${name}”.`);
}

describe("saved emails", () => {
  it("written once on their page, used in two send steps, published with no problems, sent as written", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1400, height: 950 } });
    page.on("pageerror", (e) => console.log("pageerror:", e.message));

    // 1. From Automations to Saved emails; a malformed {{ is refused under its field, in words.
    await page.goto(`${d.web.base}/automations`);
    await page.getByRole("link", { name: /Saved emails/ }).click();
    await page.getByText("No saved emails yet.").waitFor();
    await shot(page, "01-empty");
    await page.getByRole("button", { name: "New saved email" }).click();
    const welcome = { name: "Welcome 1", subject: "Welcome to the {{input.plan}} plan", text: "Hello {{contact.email}},\n\nyour {{input.plan}} plan is ready." };
    await fillSavedEmail(page, { ...welcome, text: "Hello {{contact.email" });
    await expect.poll(() => form(page).locator(".field-error").allTextContents()).toEqual([
      'The message has a "{{" that is never closed with "}}". Write each variable as {{contact.name}}, or remove the stray braces.',
    ]);
    await shot(page, "02-malformed");
    expect(await q("SELECT count(*)::int AS n FROM email_templates")).toEqual([{ n: 0 }]);

    // 2. Corrected: saved, listed with the variables it uses.
    await form(page).getByLabel("Message", { exact: true }).fill(welcome.text);
    await form(page).getByRole("button", { name: /^Save/ }).click();
    await page.locator('[data-flash="ok"]', { hasText: 'Saved "Welcome 1".' }).waitFor();
    const card = page.locator('[data-saved-email="Welcome 1"]');
    expect(await card.locator("[data-variable]").allTextContents()).toEqual(["{{input.plan}}", "{{contact.email}}"]);

    // 3. A second one that reads a step: allowed, and it says which step it needs. The same name again, whatever
    //    its case, is refused under the name.
    await page.getByRole("button", { name: "New saved email" }).click();
    await fillSavedEmail(page, { name: "Draft reply", subject: "Re: your question", text: "{{steps.draft.output.text}}" });
    await page.locator('[data-flash="ok"]', { hasText: 'Saved "Draft reply".' }).waitFor();
    expect(await page.locator('[data-saved-email="Draft reply"] [data-note]').textContent()).toBe('⚠ Needs a step named "draft" before the send step (for {{steps.draft.output.text}}).');
    await page.getByRole("button", { name: "New saved email" }).click();
    await fillSavedEmail(page, { name: "welcome 1", subject: "Other", text: "Other" });
    await form(page).locator(".field-error", { hasText: 'There is already a saved email named "Welcome 1"' }).waitFor();
    await shot(page, "03-name-taken");
    await form(page).getByRole("button", { name: "Cancel" }).click();
    expect(await q("SELECT name FROM email_templates ORDER BY name")).toEqual([{ name: "Draft reply" }, { name: "Welcome 1" }]);
    await shot(page, "04-list");

    // 4. The editor: both send steps filled from "Welcome 1".
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await canvasStep(page, "welcome").waitFor();
    await selectStep(page, "welcome");
    await page.getByTestId("saved-email-picker").getByLabel("Use a saved email").selectOption({ label: "Welcome 1" });
    await page.getByTestId("saved-email-picker").locator(".saved-email-preview").waitFor();
    await shot(page, "05-picker");
    await page.getByTestId("saved-email-picker").getByRole("button", { name: "Use this email" }).click();
    await expect.poll(() => stepField(page, "subject").locator("input").inputValue()).toBe(welcome.subject);
    expect(await stepField(page, "text").locator("textarea").inputValue()).toBe(welcome.text);
    expect(await page.getByTestId("saved-email-picker").locator(".saved-email-origin").textContent()).toBe("From the saved email “Welcome 1”.");
    await saved(page, 20_000);
    await shot(page, "06-filled");
    await selectStep(page, "welcome_again");
    await useSavedEmail(page, "Welcome 1");

    // 5. "Save as a saved email" from the second step: a new saved email, and the step now names it.
    await page.getByRole("button", { name: "Save as a saved email…" }).click();
    await page.getByLabel("Name of the saved email").fill("Welcome 1 (copy)");
    await page.getByRole("group", { name: "Save as a saved email" }).getByRole("button", { name: "Save", exact: true }).click();
    await expect.poll(() => page.getByTestId("saved-email-picker").locator(".saved-email-origin").textContent()).toBe("From the saved email “Welcome 1 (copy)”.");
    expect(await q("SELECT subject, text FROM email_templates WHERE name = 'Welcome 1 (copy)'")).toEqual([{ subject: welcome.subject, text: welcome.text }]);

    // 6. Publish with no problems.
    await saved(page, 20_000);
    await expect.poll(() => page.locator(".problems-count").textContent()).toBe("No problems");
    await page.locator("button.primary", { hasText: "Publish" }).click();
    await page.waitForSelector("text=Published version 1.");
    const [version] = await q("SELECT graph FROM automation_versions WHERE automation_id = $1 AND published_at IS NOT NULL", [automationId]);
    const configOf = (id: string) => (version.graph as { nodes: { id: string; config: Record<string, unknown> }[] }).nodes.find((n) => n.id === id)?.config;
    expect(configOf("welcome")).toMatchObject({ subject: welcome.subject, text: welcome.text, savedEmail: { name: "Welcome 1" } });

    // 7. Changing the saved email later: the step says so; the published version does not change.
    await page.goto(`${d.web.base}/automations/saved-emails?org=acme`);
    await page.locator('[data-saved-email="Welcome 1"]').getByRole("button", { name: "Edit" }).click();
    await form(page).getByLabel("Subject", { exact: true }).fill("Changed after publishing");
    await form(page).getByRole("button", { name: "Save changes" }).click();
    await page.locator('[data-flash="ok"]', { hasText: "Steps filled from it before keep their own copy." }).waitFor();
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await canvasStep(page, "welcome").waitFor();
    await selectStep(page, "welcome");
    await expect.poll(() => page.getByTestId("saved-email-picker").locator(".saved-email-origin").textContent()).toBe("From the saved email “Welcome 1”; changed since. Copy it again");
    await shot(page, "07-changed-since");
    const [after] = await q("SELECT graph FROM automation_versions WHERE automation_id = $1 AND published_at IS NOT NULL", [automationId]);
    expect(after.graph).toEqual(version.graph);
    await page.close();

    // 8. A run sends the copy the steps hold, rendered, once per step.
    const runId = await startTestRun(d.t.db, "signup", { id: "evt_1", email: "maya@example.com", plan: "Pro" });
    await waitFor(async () => ((await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed" ? true : undefined), 30_000, "the run to complete");
    const rendered = { subject: "Welcome to the Pro plan", text: "Hello maya@example.com,\n\nyour Pro plan is ready." };
    const steps = await q("SELECT node_id, output->>'subject' AS subject, output->>'text' AS text, output->>'messageId' AS \"messageId\" FROM steps WHERE run_id = $1 AND node_id LIKE 'welcome%' ORDER BY node_id", [runId]);
    // The message as sent: the saved email's, rendered (an unsubscribe footer may follow it).
    expect(steps.map(({ node_id, subject, text }) => ({ node_id, subject, text: (text as string).slice(0, rendered.text.length) }))).toEqual([
      { node_id: "welcome", ...rendered },
      { node_id: "welcome_again", ...rendered },
    ]);
    // What the SMTP sink received: two messages to Maya with the rendered subject and message.
    expect(smtp.received.map((m) => [m.messageId, m.to, m.subject])).toEqual(steps.map((st) => [st.messageId, ["maya@example.com"], rendered.subject]));
    for (const m of smtp.received) expect(m.raw.replaceAll("\r\n", "\n")).toMatch(/Hello maya@example\.com,\n\nyour Pro plan is ready\./);
  });
});
