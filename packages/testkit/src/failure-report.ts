import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { repoRoot } from "./procs";
import { openBrowsers } from "./web";

/**
 * Vitest setup file: when a test fails while a Chromium launched by launchChromium is open, every page it shows is
 * printed (address, whether React had hydrated it, the text of its main area) and saved as a screenshot in
 * e2e/artifacts/failed-*.png. A browser test that fails only on a loaded CI machine then says in the log what the
 * page showed, instead of only which locator it waited for.
 */
afterEach(async (context) => {
  if (context.task.result?.state !== "fail" || openBrowsers.size === 0) return;
  const dir = join(repoRoot, "e2e/artifacts");
  mkdirSync(dir, { recursive: true });
  const name = context.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60);
  let n = 0;
  for (const browser of openBrowsers) {
    for (const page of browser.contexts().flatMap((c) => c.pages())) {
      n++;
      try {
        const hydrated = (await page.locator("html").getAttribute("data-hydrated", { timeout: 5_000 })) !== null;
        const main = (await page.locator("main").count()) > 0 ? page.locator("main").first() : page.locator("body");
        // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is what the page showed (hidden text left out)
        const state = { hydrated, text: await main.innerText({ timeout: 5_000 }) };
        const path = join(dir, `failed-${name}-${n}.png`);
        await page.screenshot({ path, fullPage: true, timeout: 10_000 });
        const text = state.text.replace(/\n{2,}/g, "\n").slice(0, 2_000);
        console.log(`\n--- page ${n} at the failure: ${page.url()} (${state.hydrated ? "hydrated" : "not hydrated"}), screenshot ${path}\n${text}\n---`);
      } catch (error) {
        console.log(`\n--- page ${n} at the failure: ${page.url()}: could not be read (${(error as Error).message.split("\n")[0]})`);
      }
    }
  }
});
