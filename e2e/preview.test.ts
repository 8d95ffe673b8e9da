import { mkdirSync } from "node:fs";
import { createAutomation } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { getDraft, saveDraft } from "@holdfast/core/run";
import { inTx } from "@holdfast/db";
import { type HttpTarget, organisationWithOwner, type SmtpTarget, signedInPage, startHttpTarget, startSmtpTarget, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The editor's Preview in Chromium: a marketer opens an automation, picks a sample (the stored one, one typed in, a
 * contact of Settings) and reads what each step would do: the email as the recipient would read it, the wait's
 * instants, the call. A value missing from the sample is named in words and marked in the email. Nothing leaves:
 * the SMTP sink receives no message, the HTTP target no request, and no run or step is written.
 */
let d: TestDeployment;
let browser: Browser;
let smtp: SmtpTarget;
let http: HttpTarget;
let orgId: string;
let automationId: string;
// Screenshots for review go outside the repository.
const shots = process.env.PREVIEW_SHOTS ?? "/tmp/holdfast-preview";
const shot = (page: Page, name: string) => page.screenshot({ path: `${shots}/preview-${name}.png` });
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  d = await startTestDeployment();
  orgId = await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  smtp = d.closeAtStop(await startSmtpTarget());
  http = d.closeAtStop(await startHttpTarget());
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "team@acme.test" }, secret: "mail password" });
  automationId = (await inTx(d.t.db, (tx) => createAutomation(tx, { orgId, slug: "welcome", name: "Welcome" }))).id;
  await q("UPDATE automations SET sample_input = $2::jsonb WHERE id = $1", [
    automationId,
    JSON.stringify({ email: "ann@example.com", first_name: "Ann", company: "Northwind", plan: "Pro" }),
  ]);
  await q("INSERT INTO contacts (org_id, email, time_zone, consent) VALUES ($1, 'kai@example.com', 'Asia/Tokyo', 'granted')", [orgId]);
  const graph = {
    nodes: [
      { id: "trigger", kind: "trigger", config: { contactEmailField: "email" }, position: { x: 0, y: 0 } },
      { id: "morning", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.tz", zone: "Europe/Berlin" }, position: { x: 240, y: 0 } },
      { id: "notify", kind: "http_request", config: { url: `${http.url}/signup`, sendInput: true }, position: { x: 480, y: 0 } },
      {
        id: "hello",
        kind: "send_email",
        config: { connection: "mail", subject: "Welcome {{input.first_name}} from {{input.company}}", text: "Hi {{input.first_name}},\n\nthanks for choosing the {{input.plan}} plan." },
        position: { x: 720, y: 0 },
      },
      { id: "end", kind: "end", position: { x: 960, y: 0 } },
    ],
    edges: [
      { from: "trigger", to: "morning" },
      { from: "morning", to: "notify" },
      { from: "notify", to: "hello" },
      { from: "hello", to: "end" },
    ],
  };
  await saveDraft(d.t.db, orgId, automationId, graph, (await getDraft(d.t.db, orgId, automationId)).revision, "test");
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => d?.stop());

describe("the editor's preview", () => {
  it("previews the email with a sample (asserting the rendered subject and body), names a missing value, and calls nothing", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1280, height: 800 } });
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await page.locator('.react-flow__node[data-id="trigger"]').waitFor();
    await page.getByRole("tab", { name: "Preview" }).click();

    // The stored sample: every step in order, the email as Ann would read it.
    const preview = page.locator("section.preview");
    const hello = preview.locator('[data-preview-step="hello"]');
    await expect.poll(() => hello.locator("[data-email-subject]").textContent()).toBe("Welcome Ann from Northwind");
    expect(await hello.locator("[data-email-body]").textContent()).toBe("Hi Ann,\n\nthanks for choosing the Pro plan.");
    expect(await hello.locator("[data-email-to]").textContent()).toBe("ann@example.com");
    expect(await preview.locator("[data-preview-step]").evaluateAll((els) => els.map((e) => e.getAttribute("data-preview-step")))).toEqual([
      "trigger",
      "morning",
      "notify",
      "hello",
      "end",
    ]);
    expect(await preview.locator('[data-preview-step="morning"]').textContent()).toMatch(/Goes on \w{3} \d+ \w{3} \d{4}, 09:00 \(.*UTC\+0[12]:00\) · \d{4}-\d\d-\d\d 0[78]:00 UTC/);
    expect(await preview.locator('[data-preview-step="notify"]').textContent()).toContain(`POST ${http.url}/signup`);
    expect(await preview.getByLabel("missing values").count()).toBe(0);
    await shot(page, "stored");
    await hello.scrollIntoViewIfNeeded();
    await shot(page, "stored-email");

    // A sample typed in, without the company: named in words, and marked where it stands in the subject.
    await preview.getByLabel("A sample I type").check();
    await preview.locator('textarea[name="preview-json"]').fill('{"email": "bo@example.com", "first_name": "Bo", "plan": "Basic"}');
    await expect.poll(() => hello.locator("[data-email-subject]").textContent()).toBe("Welcome Bo from {{input.company}}");
    expect(await hello.locator("[data-email-body]").textContent()).toBe("Hi Bo,\n\nthanks for choosing the Basic plan.");
    expect(await preview.getByLabel("missing values").textContent()).toContain("{{input.company}} is empty in this sample");
    expect(await hello.locator("[data-email-subject] mark").textContent()).toBe("{{input.company}}");
    expect(await hello.textContent()).toContain("A real run would stop here: {{input.company}} has no value");
    await shot(page, "typed-missing");
    await hello.scrollIntoViewIfNeeded();
    await shot(page, "typed-missing-email");

    // Not JSON: said in words, not the parser's message.
    await preview.locator('textarea[name="preview-json"]').fill("{email: bo}");
    await expect.poll(() => preview.getByRole("alert").textContent()).toMatch(/^The sample is not valid JSON: check the quotes and commas/);

    // A contact of Settings: the email goes to them, and the wait counts in their stored zone (the payload names none).
    await preview.getByLabel("A contact").check();
    await preview.locator('select[name="preview-contact"]').selectOption({ label: "kai@example.com (Asia/Tokyo)" });
    await expect.poll(() => hello.locator("[data-email-to]").textContent()).toBe("kai@example.com");
    expect(await preview.locator('[data-preview-step="morning"]').textContent()).toMatch(/Goes on \w{3} \d+ \w{3} \d{4}, 09:00 \(.*UTC\+09:00\) · \d{4}-\d\d-\d\d 00:00 UTC/);
    await shot(page, "contact");

    // Nothing left the building, and nothing was written.
    await page.waitForTimeout(300);
    expect(smtp.received).toEqual([]);
    expect(http.calls.size).toBe(0);
    expect(await q("SELECT (SELECT count(*)::int FROM runs) AS runs, (SELECT count(*)::int FROM steps) AS steps, (SELECT count(*)::int FROM contacts) AS contacts")).toEqual([
      { runs: 0, steps: 0, contacts: 1 },
    ]);
    await page.close();
  });
});
