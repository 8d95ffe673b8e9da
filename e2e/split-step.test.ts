import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { organisationWithOwner, runCli, signedInPage, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addStepAfter, canvasStep, saved, selectStep, stepField } from "./fixtures/editor";

/**
 * The A/B split in Chromium: the palette offers it, it goes in after the trigger with paths A and B at 50/50, its form
 * takes a third path and new weights, the canvas shows one output per path and the drawer's "Then" one row per path;
 * wired, it publishes with whole-number weights.
 */
let d: TestDeployment;
let browser: Browser;
let dir: string;
let automationId: string;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "holdfast-split-"));
  d = await startTestDeployment();
  await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  const file = join(dir, "split.json");
  writeFileSync(file, JSON.stringify({ nodes: [{ id: "signup", kind: "trigger", config: { eventIdField: "id" } }, { id: "done", kind: "end" }], edges: [{ from: "signup", to: "done" }] }));
  const out = runCli(d.t.url, ["automations", "publish", "acme", "split", file, "--name", "Split test"]);
  expect(out.stderr).toBe("");
  automationId = (await q("SELECT id FROM automations WHERE slug = 'split'"))[0].id as string;
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => {
  await d?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the A/B split step in the editor", () => {
  it("is offered by the palette, its paths are set in its form, each path is an output, and it publishes", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1280, height: 800 } });
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    expect(await page.locator('.palette-item[data-kind="split"]').textContent()).toContain("A/B split");
    await addStepAfter(page, "signup", "split", "split");
    expect(await canvasStep(page, "split").locator(".handle-label").allTextContents()).toEqual(["A", "B"]);

    const paths = stepField(page, "paths");
    await paths.locator('input[name="paths.1.value"]').fill("30");
    await paths.getByRole("button", { name: /Add path/ }).click();
    await paths.locator('input[name="paths.2.key"]').fill("C");
    await paths.locator('input[name="paths.2.value"]').fill("20");
    await expect.poll(() => canvasStep(page, "split").locator(".handle-label").allTextContents()).toEqual(["A", "B", "C"]);

    // The paths the palette did not wire, from the drawer's "Then": one row per path.
    await selectStep(page, "split");
    expect(await page.locator(".outputs .output-name").allTextContents()).toEqual(["Path A: go to", "Path B: go to", "Path C: go to"]);
    await page.selectOption('select[name="output-B"]', "done");
    await page.selectOption('select[name="output-C"]', "done");
    await saved(page, 20_000);
    await expect.poll(() => page.locator(".problems-count").textContent(), { timeout: 10_000 }).toBe("No problems");
    // A step with a problem shows the problem in its place on the canvas (the split's unwired paths, until the checks
    // answer for the draft just saved); once it has none, its summary.
    await expect.poll(() => canvasStep(page, "split").locator(".step-summary").textContent(), { timeout: 10_000 }).toBe("Split A 50%, B 30%, C 20%");

    await page.locator("button.primary", { hasText: "Publish" }).click();
    await page.waitForSelector("text=Published version 2.");
    const [v2] = await q("SELECT graph FROM automation_versions WHERE automation_id = $1 AND version = 2", [automationId]);
    const split = v2.graph.nodes.find((n: { id: string }) => n.id === "split");
    expect(split).toMatchObject({ kind: "split", config: { paths: { A: 50, B: 30, C: 20 } } });
    expect(v2.graph.edges.filter((e: { from: string }) => e.from === "split").map((e: { label: string; to: string }) => `${e.label}->${e.to}`).sort()).toEqual(["A->done", "B->done", "C->done"]);
  });
});
