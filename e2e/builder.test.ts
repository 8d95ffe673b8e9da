import { fetchAgain, organisationWithOwner, screenshots, sessionCookieFor, signedInPage, startTestDeployment, startTestRun, type TestDeployment, testPassword, waitFor } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saved } from "./fixtures/editor";

/**
 * The builder in Chromium: sign in, create an automation, add and connect nodes, see a validation error and fix
 * it, publish v1, start runs on it, remove a node and publish v2, read the diff, then dry-run and apply a migration
 * of the in-flight runs. Screenshots of each screen go to e2e/artifacts.
 */
let d: TestDeployment;
let browser: Browser;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shot = screenshots("builder");

beforeAll(async () => {
  d = await startTestDeployment();
  await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => d?.stop());

/** A step's input ("left", drawn on top: the canvas flows top to bottom) or output ("right", drawn at the bottom). */
const handle = (page: Page, node: string, side: "left" | "right", id?: string) =>
  page.locator(`.react-flow__handle[data-nodeid="${node}"][data-handlepos="${side === "left" ? "top" : "bottom"}"]${id ? `[data-handleid="${id}"]` : ""}`);

/** Click-to-connect: the source's output, then the target's input. */
/** Click-to-connect, then wait for the edge to be drawn: on a loaded machine a click can land before the handle listens. */
async function connect(page: Page, from: string, to: string): Promise<void> {
  const edges = page.locator(".react-flow__edge");
  const before = await edges.count();
  for (let attempt = 1; ; attempt++) {
    await handle(page, from, "right").click({ force: true });
    await handle(page, to, "left").click({ force: true });
    try {
      await expect.poll(() => edges.count(), { timeout: 5_000 }).toBeGreaterThan(before);
      return;
    } catch (error) {
      if (attempt === 3) throw new Error(`no edge from ${from} to ${to} after 3 tries`, { cause: error });
    }
  }
}


describe("the builder", () => {
  it("draws, validates, publishes two versions, diffs them and migrates in-flight runs", async () => {
    const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
    await page.goto(`${d.web.base}/automations`);
    await page.waitForURL(/\/signin/);
    await page.fill('input[name="email"]', "olivia@acme.test");
    await page.fill('input[name="password"]', "correct horse battery");
    await page.click('button[type="submit"]');
    await page.waitForURL(/\/automations$/);
    await page.waitForSelector("text=No automations yet");
    await shot(page, "1-empty");

    await page.fill('input[name="automation-name"]', "Trial follow-up");
    await page.click('button:has-text("Create")');
    await page.waitForURL(/\/automations\/aut_[0-9a-f]{32}\?org=acme/);
    const automationId = /aut_[0-9a-f]{32}/.exec(page.url())?.[0] as string;
    await page.waitForSelector('.react-flow__node[data-id="trigger"]');

    // Add an HTTP request between the trigger and the end: drop it from the palette beside them (the new automation
    // has its end under its trigger), rewire the edges.
    const canvas = page.locator(".canvas");
    await page.locator('.palette-item[data-kind="http_request"]').dragTo(canvas, { targetPosition: { x: 150, y: 150 } });
    await page.waitForSelector('.react-flow__node[data-id="http_request"]');
    // The edge's middle holds its "+" (insert a step): select the edge itself.
    await page.locator(".react-flow__edge").first().dispatchEvent("click");
    await page.keyboard.press("Delete");
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(0);
    await connect(page, "trigger", "http_request");
    await connect(page, "http_request", "end");
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(2);
    await saved(page);
    await expect.poll(() => page.locator(".problems-count").textContent()).toBe("No problems");

    // A wrong setting is saved (nothing typed is lost) and shown on the node and in the panel; fixing it clears it.
    await page.locator('.react-flow__node[data-id="http_request"]').click();
    const url = page.locator('.step-form [name="url"]');
    await url.fill("not a url");
    await saved(page);
    await page.waitForSelector('.form-field[data-field="url"] .field-error');
    expect(await page.locator('.form-field[data-field="url"] .field-error').first().textContent()).toBe("Not a web address (https://…)");
    expect(await page.locator('.step-node[data-node="http_request"]').getAttribute("class")).toContain("invalid");
    expect(await page.locator('button:has-text("Publish")').isDisabled()).toBe(true);
    await shot(page, "2-validation-error");
    await url.fill("https://crm.example.com/hook");
    await saved(page);
    await expect.poll(() => page.locator(".problems-count").textContent()).toBe("No problems");
    await page.click('button:has-text("Publish")');
    await page.waitForSelector("text=Published version 1.");
    await shot(page, "3-published-v1");
    const [{ slug }] = await q("SELECT slug FROM automations WHERE id = $1", [automationId]);
    // The step id given when the node was added is the step id in the published version.
    const [v1] = await q("SELECT graph FROM automation_versions WHERE automation_id = $1 AND version = 1", [automationId]);
    expect(v1.graph.nodes.map((n: { id: string }) => n.id).sort()).toEqual(["end", "http_request", "trigger"]);

    // Three runs of v1 are in flight on the HTTP step (no worker runs in this test).
    const runs: string[] = [];
    for (const key of ["a", "b", "c"]) {
      runs.push(
        await startTestRun(d.t.db, slug, { id: key }, { webhookId: `msg_${key}` }),
      );
    }

    // v2: the HTTP request is removed; a wait takes its place. Its id cannot be renamed now (published).
    await page.locator('.react-flow__node[data-id="http_request"]').click();
    expect(await page.locator('input[name="node-id"]').isDisabled()).toBe(true);
    // Under load a key press can land before the canvas holds the selection (the fresh-clone CI at 81f8f65 kept the
    // node once): select it and press again, up to 3 times, until it is gone.
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("Delete");
      const gone = await expect
        .poll(() => page.locator('.react-flow__node[data-id="http_request"]').count(), { timeout: 3_000 })
        .toBe(0)
        .then(() => true, () => false);
      if (gone) break;
      await page.locator('.react-flow__node[data-id="http_request"]').click();
    }
    await expect.poll(() => page.locator('.react-flow__node[data-id="http_request"]').count()).toBe(0);
    // Its neighbours are joined (one way in, one way out); the wait goes in between with the edge's "+".
    await page.waitForSelector('.react-flow__edge[data-id="trigger->end"]', { state: "attached" });
    await page.locator('.edge-insert[data-edge="trigger->end"]').click();
    await page.locator('[data-chooser="kind"] [data-choice="wait"]').click();
    await page.waitForSelector('.react-flow__node[data-id="wait"]');
    await page.waitForSelector('.react-flow__edge[data-id="wait->end"]', { state: "attached" });
    await saved(page);
    await expect.poll(() => page.locator(".problems-count").textContent()).toBe("No problems");
    await page.click('button:has-text("Publish")');
    await page.waitForSelector("text=Published version 2.");
    await shot(page, "4-published-v2");
    // Publish again (a second click): nothing new, and it says which version this already is.
    await page.click('button:has-text("Publish")');
    await page.waitForSelector("text=Already published: this is version 2");
    expect(await q("SELECT count(*)::int AS n FROM automation_versions WHERE automation_id = $1", [automationId])).toEqual([{ n: 2 }]);

    await page.click('a:has-text("Versions")');
    await page.waitForURL(/\/versions/);
    await page.waitForSelector(".diff-removed");
    expect(await page.locator(".diff").textContent()).toContain("− node http_request (http_request)");
    expect(await page.locator(".diff").textContent()).toContain("+ node wait (wait)");
    await shot(page, "5-diff");

    await page.selectOption('select[name="removed-rule"]', "move");
    await page.fill('input[name="move-to"]', "wait");
    await page.click('button:has-text("Dry run")');
    await page.waitForSelector('table.dry-run tr[data-from="http_request"]');
    expect(await page.locator('table.dry-run tr[data-from="http_request"]').textContent()).toMatch(/http_request\s*3\s*move: wait\s*0/);
    await shot(page, "6-dry-run");
    await page.click('button:has-text("Apply")');
    await page.waitForSelector("text=Moved 3, cancelled 0, stayed 0, deferred 0 (0 left to move).");
    await shot(page, "7-applied");

    const after = await q(
      `SELECT r.id, v.version, s.node_id FROM runs r JOIN automation_versions v ON v.id = r.version_id
       JOIN steps s ON s.run_id = r.id AND s.status = 'waiting' WHERE r.id = ANY($1)`,
      [runs],
    );
    expect(after.map((r) => [r.version, r.node_id])).toEqual([
      [2, "wait"],
      [2, "wait"],
      [2, "wait"],
    ]);
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM run_events WHERE type = 'run.migrated'"))[0].n === 3, 5_000, "timeline rows");

    // Settings: a contact with its time zone and consent; the connection list never shows a secret.
    await page.click('nav a:has-text("Settings")');
    await page.waitForSelector("text=Members and roles");
    const contactForm = page.locator("form", { has: page.locator('button:has-text("Save contact")') });
    await contactForm.locator('input[name="email"]').fill("maya@example.com");
    await contactForm.locator('input[name="tz"]').fill("Europe/Berlin");
    await contactForm.locator('select[name="consent"]').selectOption("granted");
    await contactForm.locator('button[type="submit"]').click();
    await page.waitForSelector("text=contact saved").catch(async (e: Error) => {
      throw new Error(`${e.message}\nat ${page.url()} the contact form read: ${await contactForm.textContent()} (email field: "${await contactForm.locator('input[name="email"]').inputValue()}")`);
    });
    await page.waitForSelector("td:has-text('Europe/Berlin')");
    await shot(page, "8-settings");
    expect(await q("SELECT email, time_zone, consent FROM contacts")).toEqual([{ email: "maya@example.com", time_zone: "Europe/Berlin", consent: "granted" }]);
    await page.close();

    // Another organisation's user finds none of it through the pages either.
    await organisationWithOwner(d.t.db, { email: "eve@other.test", name: "Eve" }, "other");
    const eve = await sessionCookieFor(d.t.db, "eve@other.test", testPassword);
    for (const path of [`/automations/${automationId}`, `/automations/${automationId}/versions`, `/runs/${runs[0]}`]) {
      expect((await fetchAgain(`${d.web.base}${path}`, { headers: { cookie: eve } })).status, path).toBe(404);
    }
    const settings = await (await fetchAgain(`${d.web.base}/settings?org=acme`, { headers: { cookie: eve } })).text();
    expect(settings).toMatch(/Settings: (<!-- -->)?Other/);
    expect(settings).not.toContain("Acme");
  });

  it("a palette click places the step after the selected one, connected, never on top of another; Tidy lays it out", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1500, height: 1000 } });
    await page.goto(`${d.web.base}/automations`);
    await page.fill('input[name="automation-name"]', "Layout check");
    await page.click('button:has-text("Create")');
    await page.waitForURL(/\/automations\/aut_[0-9a-f]{32}\?org=acme/);
    await page.waitForSelector('.react-flow__node[data-id="end"]');
    // The end node is selected: a new HTTP step lands beside it (an end has no output to connect).
    await page.locator('.react-flow__node[data-id="end"]').click();
    await page.click('.palette-item[data-kind="http_request"]');
    await page.waitForSelector('.react-flow__node[data-id="http_request"]');
    // The new step is selected: an end added now is connected from its free output.
    await page.click('.palette-item[data-kind="end"]');
    await page.waitForSelector('.react-flow__node[data-id="end_2"]');
    await page.waitForSelector('.react-flow__edge[data-id="http_request->end_2"]', { state: "attached" });
    const measure = async () =>
      Object.fromEntries(
        await Promise.all(
          ["trigger", "end", "http_request", "end_2"].map(async (id) => [id, await page.locator(`.react-flow__node[data-id="${id}"]`).boundingBox()] as const),
        ),
      );
    // The canvas pans to each new step (a 200 ms animation) and Tidy moves the nodes: boxes read one by one while the
    // view still moves belong to different moments, so read them until two readings 100 ms apart agree.
    const boxes = async () => {
      let last = JSON.stringify(await measure());
      for (let i = 0; i < 50; i++) {
        await page.waitForTimeout(100);
        const now = JSON.stringify(await measure());
        if (now === last) break;
        last = now;
      }
      return JSON.parse(last) as Awaited<ReturnType<typeof measure>>;
    };
    const apart = (b: Record<string, { x: number; y: number; width: number; height: number } | null>) => {
      const list = Object.values(b) as { x: number; y: number; width: number; height: number }[];
      return list.every((p, i) => list.every((r, j) => i === j || p.x + p.width <= r.x || r.x + r.width <= p.x || p.y + p.height <= r.y || r.y + r.height <= p.y));
    };
    expect(apart(await boxes())).toBe(true);
    await page.click('button:has-text("Tidy layout")');
    const tidy = await boxes();
    expect(apart(tidy)).toBe(true);
    // Top to bottom: each step above the one it leads to.
    expect((tidy.trigger?.y ?? 0) < (tidy.end?.y ?? 0)).toBe(true);
    expect((tidy.http_request?.y ?? 0) < (tidy.end_2?.y ?? 0)).toBe(true);
    await shot(page, "8-tidy");
    await page.close();
  });

  it("an edit made while a slow save is in flight is saved on top of it, never read as someone else's save", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1500, height: 1000 } });
    await page.goto(`${d.web.base}/automations`);
    await page.fill('input[name="automation-name"]', "Slow network");
    await page.click('button:has-text("Create")');
    await page.waitForURL(/\/automations\/aut_[0-9a-f]{32}\?org=acme/);
    const automationId = /aut_[0-9a-f]{32}/.exec(page.url())?.[0];
    await page.waitForSelector('.react-flow__node[data-id="end"]');
    // Every save answers 2.5 s late, as on a slow connection or a loaded server.
    let saves = 0;
    await page.route("**/api/trpc/**drafts.save**", async (route) => {
      saves += 1;
      await new Promise((r) => setTimeout(r, 2500));
      await route.continue();
    });
    await page.locator('.react-flow__node[data-id="end"]').click();
    await page.click('.palette-item[data-kind="http_request"]');
    await page.waitForSelector('.react-flow__node[data-id="http_request"]');
    // The autosave fires after 0.8 s and is still in flight when the next edit lands and its own 0.8 s pass.
    await expect.poll(() => saves).toBe(1);
    await page.click('.palette-item[data-kind="end"]');
    await page.waitForSelector('.react-flow__node[data-id="end_2"]');
    await page.waitForTimeout(1200);
    expect(await page.locator(".save-state").getAttribute("class")).toMatch(/save-(dirty|saving)/);
    await page.waitForSelector(".save-state.save-saved", { timeout: 20_000 });
    expect(await page.locator(".save-state.save-conflict").count()).toBe(0);
    const [draft] = await q("SELECT graph, revision FROM automation_drafts WHERE automation_id = $1", [automationId]);
    expect(draft.graph.nodes.map((n: { id: string }) => n.id).sort()).toEqual(["end", "end_2", "http_request", "trigger"]);
    expect(draft.revision).toBe(3);
    expect(await page.locator(".editor-bar").textContent()).toContain("revision 3");
    await page.close();
  });
});
