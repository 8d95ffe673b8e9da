import { organisationWithOwner, productProcesses, screenshots, signedInPage, startTestDeployment, type TestDeployment, waitFor } from "@holdfast/testkit";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectedStoryStandIns, type StoryStandIns } from "./fixtures/story";

/**
 * New automation from a template (issue 44), in Chromium against every real process and local SMTP, model, CRM and
 * Slack servers that count what reaches them. Sam opens the gallery, sees what a template needs before the
 * organisation has its connections (each missing one named, with the link to Settings), then for each template
 * answers its questions through the step forms' own widgets, clicks Create twice (one automation), lands in the
 * editor with no problems, publishes, starts a Test run from the trigger and plays it to the end: completed, and
 * nothing reached the SMTP server, the CRM or Slack. Screenshots: e2e/artifacts/templates-*.png.
 */
let d: TestDeployment;
let standIns: StoryStandIns;
let page: Page;
let orgId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shots = screenshots("templates");
const shot = (name: string) => shots(page, name);

beforeAll(async () => {
  d = await startTestDeployment();
  orgId = await organisationWithOwner(d.t.db, { email: "sam@acme.test", name: "Sam" });
  const web = await d.startWeb();
  await d.startApps(productProcesses({ io: {}, slow: {}, human: { HOLDFAST_PUBLIC_URL: web.base } }), 90_000);
  page = await signedInPage(await d.launchBrowser(), web.base, "sam@acme.test", { viewport: { width: 1280, height: 900 }, timezoneId: "Europe/Berlin" });
  page.on("pageerror", (e) => console.log("pageerror:", e.message));
}, 300_000);

afterAll(async () => d?.stop());

/** The answers each template asks for, given through its form (selects by the question's name). */
const answer: Record<string, (p: Page) => Promise<void>> = {
  "lead-follow-up": async (p) => {
    await p.locator('select[name="mail"]').selectOption("mail");
    await p.locator('input[name="sender"]').fill("Sam at Acme");
    await p.locator('select[name="model"]').selectOption("writer");
    await p.locator('select[name="crm"]').selectOption("crm");
    await p.locator('input[name="approvers.users"][value="sam@acme.test"]').check();
    await p.locator('select[name="slack"]').selectOption("slack");
    await p.locator('input[name="slackChannel"]').fill("C0MARKETING");
  },
  "welcome-series": async (p) => {
    await p.locator('select[name="mail"]').selectOption("mail");
    await p.locator('input[name="sender"]').fill("Sam at Acme");
    await p.locator('input[name="product"]').fill("Acme");
  },
  "re-engagement": async (p) => {
    await p.locator('select[name="mail"]').selectOption("mail");
    await p.locator('input[name="sender"]').fill("Sam at Acme");
    await p.locator('input[name="product"]').fill("Acme");
    await p.locator('input[name="link"]').fill("https://app.acme.test/login");
  },
};

const statusOf = async (runId: string) => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status as string;

/** The trigger's panel: Test run; the new run's id. */
async function startTestRun(automationId: string): Promise<string> {
  await page.locator('.react-flow__node[data-id="trigger"]').click();
  const before = (await q("SELECT count(*)::int AS n FROM runs WHERE org_id = $1 AND automation_id = $2 AND test", [orgId, automationId]))[0].n as number;
  await page.getByRole("button", { name: "Test run", exact: true }).click();
  // Its answer: "Test run started", or the refusal in words (named in the failure, not a bare timeout).
  const answer = page.locator(".test-run-starter").locator('[role="status"], .field-error').first();
  await answer.waitFor({ timeout: 60_000 });
  expect(await answer.textContent()).toContain("Test run started");
  await waitFor(async () => (await q("SELECT count(*)::int AS n FROM runs WHERE automation_id = $1 AND test", [automationId]))[0].n > before, 10_000, "the test run");
  return (await q("SELECT id FROM runs WHERE automation_id = $1 AND test ORDER BY created_at DESC LIMIT 1", [automationId]))[0].id as string;
}

describe("new automation from a template", () => {
  it("the gallery; a template's form names each missing connection with the way to Settings", async () => {
    await page.goto(`${d.web.base}/automations?org=acme`);
    await page.getByRole("link", { name: "New automation from a template" }).click();
    await page.locator('[data-template="lead-follow-up"]').waitFor();
    expect(await page.locator(".template-gallery > li").count()).toBeGreaterThanOrEqual(3);
    const lead = await page.locator('[data-template="lead-follow-up"]').textContent();
    expect(lead).toContain("Wait until 09:00 on the next weekday in the lead's time zone");
    expect(await page.locator('[data-template="re-engagement"]').textContent()).toContain("no activity for 30 days");
    await shot("1-gallery");

    await page.getByRole("link", { name: "Start from Lead follow-up" }).click();
    const missing = page.locator("[data-missing-connections]");
    await missing.waitFor();
    for (const words of ["email (SMTP)", "AI model", "CRM"]) expect(await missing.textContent()).toContain(`There is no ${words} connection yet.`);
    expect(await missing.locator("a").first().getAttribute("href")).toBe("/settings?org=acme#connections");
    expect(await page.getByRole("button", { name: "Create" }).isDisabled()).toBe(true);
    await shot("2-form-missing-connections");
  }, 120_000);

  for (const template of ["lead-follow-up", "welcome-series", "re-engagement"]) {
    it(`${template}: answered, created once, published with no problems, and a test run plays to the end sending nothing`, async () => {
      if (!standIns) standIns = await connectedStoryStandIns(d, orgId);
      await page.goto(`${d.web.base}/automations/templates/${template}?org=acme`);
      await page.locator("form.step-form").waitFor();
      await answer[template]?.(page);
      await expect.poll(() => page.locator("[data-still-to-answer]").count()).toBe(0);
      await expect.poll(() => page.locator("[data-publish-problems]").count()).toBe(0);
      if (template === "lead-follow-up") await shot("3-lead-follow-up-form");

      // Create, clicked twice: one automation, and the editor opens on it.
      const create = page.getByRole("button", { name: "Create" });
      await create.click();
      await create.click({ force: true, timeout: 2_000 }).catch(() => {});
      await page.waitForURL(/\/automations\/aut_[0-9a-f]{32}\?org=acme/);
      const automationId = new URL(page.url()).pathname.split("/").at(-1) as string;
      expect((await q("SELECT count(*)::int AS n FROM automations WHERE org_id = $1 AND slug = $2", [orgId, template]))[0].n).toBe(1);

      await expect.poll(() => page.locator(".problems-count").textContent(), { timeout: 20_000 }).toBe("No problems");
      if (template === "lead-follow-up") await shot("4-lead-follow-up-editor");
      await page.click('button:has-text("Publish")');
      await page.waitForSelector("text=Published version 1.");

      const runId = await startTestRun(automationId);
      await page.goto(`${d.web.base}/runs/${runId}`);
      const panel = page.locator('section[aria-label="test run"]');
      await panel.getByRole("button", { name: "Play to the end" }).click();
      await panel.locator('[data-played="finished"]').waitFor({ timeout: 90_000 });
      await waitFor(async () => (await statusOf(runId)) === "completed", 30_000, "the test run to complete");
      if (template === "lead-follow-up") {
        await page.reload();
        await shot("5-lead-follow-up-test-run");
      }
      // Every email of the journey was made and none sent.
      const sends = await q("SELECT node_id, output FROM steps WHERE run_id = $1 AND kind = 'send_email' ORDER BY created_at", [runId]);
      expect(sends.length).toBeGreaterThan(0);
      for (const s of sends) expect(s.output, s.node_id).toMatchObject({ simulated: true, to: "lena@example.com" });
      expect(standIns.smtp.received).toHaveLength(0);
      expect(standIns.crm.upserts.size).toBe(0);
      expect(standIns.slack.posts).toBe(0);
    }, 240_000);
  }

  it("the re-engagement automation counts a click as its goal", async () => {
    expect((await q("SELECT goal FROM automations WHERE org_id = $1 AND slug = 're-engagement'", [orgId]))[0].goal).toBe("clicked");
  });
});
