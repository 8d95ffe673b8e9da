import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterEach, beforeEach } from "vitest";
import { openBrowsers } from "./open-browsers";

/**
 * Vitest setup file: when a test fails while a Chromium launched by launchChromium is open, every page it shows is
 * printed (address, whether React had hydrated it, the text of its main area) and saved as a screenshot in
 * e2e/artifacts/failed-*.png. A browser test that fails only on a loaded CI machine then says in the log what the
 * page showed, instead of only which locator it waited for. Pages already open when the test began are marked so
 * (a page left open by an earlier failed test is not this test's).
 */
const artifacts = join(dirname(fileURLToPath(import.meta.url)), "../../../e2e/artifacts");
const openPages = (): Page[] => [...openBrowsers].flatMap((b) => b.contexts().flatMap((c) => c.pages()));
let before = new Set<Page>();

beforeEach(() => {
  before = new Set(openPages());
});

afterEach(async (context) => {
  if (context.task.result?.state !== "fail" || openBrowsers.size === 0) return;
  mkdirSync(artifacts, { recursive: true });
  const name = context.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60);
  // This test's own pages first.
  const pages = openPages().sort((a, b) => Number(before.has(a)) - Number(before.has(b)));
  for (const [i, page] of pages.entries()) {
    const label = `page ${i + 1} at the failure${before.has(page) ? " (open since before this test)" : ""}: ${page.url()}`;
    try {
      const hydrated = (await page.locator("html").getAttribute("data-hydrated", { timeout: 3_000 })) !== null;
      const main = page.locator("main").first();
      const shown = (await main.count()) > 0 ? main : page.locator("body");
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is what the page showed (hidden text left out)
      const text = (await shown.innerText({ timeout: 3_000 })).replace(/\n{2,}/g, "\n").slice(0, 2_000);
      const path = join(artifacts, `failed-${name}-${i + 1}.png`);
      await page.screenshot({ path, fullPage: true, timeout: 5_000 });
      console.log(`\n--- ${label} (${hydrated ? "hydrated" : "not hydrated"}), screenshot ${path}\n${text}\n---`);
    } catch (error) {
      console.log(`\n--- ${label}: could not be read (${(error as Error).message.split("\n")[0]})`);
    }
  }
});
