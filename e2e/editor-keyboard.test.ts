/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page.evaluate callbacks below run in Chromium: their DOM types come from lib dom.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { contextWithSession, organisationWithOwner, repoRoot, sessionCookieFor, startTestDeployment, type TestDeployment, testPassword } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The editor with the keyboard alone (page.keyboard only, no mouse): create an automation, Tab into the canvas,
 * walk its steps with the arrows, add an HTTP request after the trigger with A, open it with Enter, type its address,
 * find a step with Ctrl+K, and see "All changes saved" with trigger -> HTTP request -> end in the saved draft.
 */
let d: TestDeployment;
let browser: Browser;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const artifacts = join(repoRoot, "e2e/artifacts");

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  d = await startTestDeployment();
  await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => d?.stop());

/** What has the focus: a step's id, an element's name, its choice or its text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return el?.closest(".react-flow__node")?.getAttribute("data-id") ?? el?.getAttribute("name") ?? el?.getAttribute("data-choice") ?? el?.getAttribute("aria-label") ?? el?.textContent ?? "";
  });

/**
 * Presses Tab until the focus is on what `test` accepts (at most 80 presses). After each press the focus is given a
 * moment to settle, as a person's next key press would: tabbing onto the canvas hands the focus on to a step 40 ms
 * later.
 */
async function tabUntil(page: Page, test: (page: Page) => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    for (let wait = 0; wait < 5; wait++) {
      if (await test(page)) return;
      await page.waitForTimeout(50);
    }
    await page.keyboard.press("Tab");
  }
  throw new Error(`Tab never reached ${what}`);
}
const activeMatches = (selector: string) => (page: Page) => page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector);

describe("the editor with the keyboard only", () => {
  it("builds trigger -> HTTP request -> end and saves it", async () => {
    const cookie = await sessionCookieFor(d.t.db, "olivia@acme.test", testPassword);
    const context = await contextWithSession(browser, cookie, { viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${d.web.base}/automations?org=acme`);
    await page.locator('input[name="automation-name"]').waitFor();
    await page.locator("html[data-hydrated]").waitFor();

    await tabUntil(page, activeMatches('input[name="automation-name"]'), "the new automation's name");
    await page.keyboard.type("Keyboard only");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/automations\/aut_[0-9a-f]{32}\?org=acme/);
    const automationId = /aut_[0-9a-f]{32}/.exec(page.url())?.[0] as string;
    await page.locator('.react-flow__node[data-id="end"]').waitFor();

    // Tab into the canvas: the focus lands on the trigger; the arrows walk to the end and back.
    await tabUntil(page, async (p) => (await focused(p)) === "trigger", "the canvas's trigger");
    await page.keyboard.press("ArrowDown");
    await expect.poll(() => focused(page)).toBe("end");
    await expect.poll(() => page.locator(".react-flow__node.selected").getAttribute("data-id")).toBe("end");
    await page.keyboard.press("ArrowUp");
    await expect.poll(() => focused(page)).toBe("trigger");

    // A: which step comes next; the arrows move through the kinds, Enter picks the HTTP request.
    await page.keyboard.press("a");
    await page.locator('[data-chooser="kind"]').waitFor();
    for (let i = 0; i < 20 && (await focused(page)) !== "http_request"; i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.locator('.react-flow__node[data-id="http_request"]').waitFor();
    await expect.poll(() => focused(page)).toBe("http_request");

    // Enter opens its drawer with the focus in it; Tab to the address and type it.
    await page.keyboard.press("Enter");
    await expect.poll(() => focused(page)).toBe("node-id");
    await tabUntil(page, activeMatches('.step-form [name="url"]'), "the address field");
    await page.keyboard.press("Control+a");
    await page.keyboard.type("https://crm.example.com/hook");
    // Escape hands the focus back to the step; Ctrl+K finds the end by name.
    await page.keyboard.press("Escape");
    await expect.poll(() => focused(page)).toBe("http_request");
    await page.keyboard.press("Control+k");
    await page.keyboard.type("end");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator(".react-flow__node.selected").getAttribute("data-id")).toBe("end");

    await page.waitForSelector(".save-state.save-saved", { timeout: 20_000 });
    expect(await page.locator(".save-state").textContent()).toBe("All changes saved");
    await expect.poll(() => page.locator(".problems-count").textContent()).toBe("No problems");
    await page.screenshot({ path: join(artifacts, "editor-keyboard.png") });
    const [draft] = await q("SELECT graph FROM automation_drafts WHERE automation_id = $1", [automationId]);
    expect(draft.graph.nodes.map((n: { id: string }) => n.id).sort()).toEqual(["end", "http_request", "trigger"]);
    expect(draft.graph.edges.map((e: { from: string; to: string }) => `${e.from}->${e.to}`).sort()).toEqual(["http_request->end", "trigger->http_request"]);
    expect(draft.graph.nodes.find((n: { id: string }) => n.id === "http_request").config.url).toBe("https://crm.example.com/hook");
    await context.close();
  });
});
