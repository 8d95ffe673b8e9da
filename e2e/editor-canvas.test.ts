/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page.evaluate callbacks below run in Chromium: their DOM types come from lib dom.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "@holdfast/core/providers";
import { addMember, organisationWithOwner, repoRoot, runCli, signedInPage, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canvasStep, saved as savedWithin } from "./fixtures/editor";
import { storyGraphInput } from "./fixtures/story";

/**
 * The full-window editor in Chromium at 1280x800: a 30-step automation published through the CLI, tidied top to
 * bottom at a readable zoom with no step overlapping another or hidden under the palette or the drawer, every step
 * reachable by scrolling; a step put in on an edge, duplicated, copied and pasted (new ids, references rewritten in
 * the saved draft), found with Ctrl+K, deleted with its neighbours joined; the product's 9-step story as a
 * screenshot; and an autosave whose answer is lost on the way, which says "busy", saves by itself and is never read
 * as someone else's save.
 */
let d: TestDeployment;
let browser: Browser;
let dir: string;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const artifacts = join(repoRoot, "e2e/artifacts");
const cli = (args: string[]) => runCli(d.t.url, args);

/** Publishes a graph through `holdfast automations publish`; the automation's id. */
async function publishGraph(slug: string, name: string, graph: unknown): Promise<string> {
  const file = join(dir, `${slug}.json`);
  writeFileSync(file, JSON.stringify(graph));
  const out = cli(["automations", "publish", "acme", slug, file, "--name", name]);
  expect(out.stderr).toBe("");
  expect(out.stdout).toBe(`published acme/${slug} as version 1\n`);
  return (await q("SELECT id FROM automations WHERE slug = $1", [slug]))[0].id as string;
}

/**
 * 30 steps: a trigger, six blocks of (call -> check its status -> wait | note -> next block), a last call and check,
 * a final call, and two ends. Each check reads the call before it (`steps.fetch_<n>.output.status`).
 */
function thirtySteps() {
  const nodes: { id: string; kind: string; name?: string; config?: unknown }[] = [{ id: "signup", kind: "trigger", name: "Signed up", config: { eventIdField: "id" } }];
  const edges: { from: string; to: string; label?: string }[] = [];
  let prev = "signup";
  for (let i = 1; i <= 7; i++) {
    nodes.push({ id: `fetch_${i}`, kind: "http_request", name: `Call the CRM ${i}`, config: { url: `https://crm.example.com/step/${i}` } });
    nodes.push({ id: `check_${i}`, kind: "branch", name: `Did call ${i} work?`, config: { condition: { path: `steps.fetch_${i}.output.status`, op: "eq", value: 200 } } });
    if (prev) edges.push({ from: prev, to: `fetch_${i}` });
    edges.push({ from: `fetch_${i}`, to: `check_${i}` });
    if (i === 7) break;
    nodes.push({ id: `pause_${i}`, kind: "wait", name: `Wait a day ${i}`, config: { rule: { kind: "duration", seconds: 86_400 } } });
    nodes.push({ id: `note_${i}`, kind: "http_request", name: `Log the failure ${i}`, config: { url: `https://log.example.com/${i}` } });
    edges.push({ from: `check_${i}`, to: `pause_${i}`, label: "true" }, { from: `check_${i}`, to: `note_${i}`, label: "false" });
    edges.push({ from: `pause_${i}`, to: `fetch_${i + 1}` }, { from: `note_${i}`, to: `fetch_${i + 1}` });
    prev = "";
  }
  nodes.push({ id: "final", kind: "http_request", name: "Tell the team", config: { url: "https://team.example.com/done" } });
  nodes.push({ id: "done", kind: "end", name: "Done" }, { id: "lost", kind: "end", name: "Gave up" });
  edges.push({ from: "check_7", to: "final", label: "true" }, { from: "check_7", to: "lost", label: "false" }, { from: "final", to: "done" });
  return { nodes, edges };
}

/** The product's story (e2e/maya.test.ts): 9 steps from the form to the CRM. */
const story = storyGraphInput({
  prompt: "Write a short, friendly follow-up to {{input.name}} about {{input.question}}",
  subject: "About your question, {{input.name}}",
  text: "{{steps.draft.output.text}}",
  slack: false,
});

let bigId: string;
let storyId: string;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "holdfast-editor-canvas-"));
  d = await startTestDeployment();
  const orgId = await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "approver");
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: 2525, tls: "none", from: "Sam at Acme <sam@acme.test>", user: "sam@acme.test" }, secret: "mail password" });
  await createConnection(d.t.db, { orgId, kind: "model", name: "writer", config: { baseUrl: "http://127.0.0.1:9/v1", model: "gpt-4o-mini", inputMicrosPerMTok: 150_000, outputMicrosPerMTok: 600_000 }, secret: "sk-writer" });
  await createConnection(d.t.db, { orgId, kind: "crm", name: "crm", config: { baseUrl: "http://127.0.0.1:9" }, secret: "crm-token" });
  bigId = await publishGraph("big", "Thirty steps", thirtySteps());
  storyId = await publishGraph("maya-follow-up", "Maya follow-up", story);
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => {
  await d?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Box = { x: number; y: number; width: number; height: number };
const inside = (b: Box, c: Box) => b.x >= c.x - 0.5 && b.y >= c.y - 0.5 && b.x + b.width <= c.x + c.width + 0.5 && b.y + b.height <= c.y + c.height + 0.5;
const intersects = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const draftOf = async (id: string) =>
  (await q("SELECT graph, revision FROM automation_drafts WHERE automation_id = $1", [id]))[0] as {
    graph: { nodes: { id: string; kind: string; config: Record<string, unknown> }[]; edges: { from: string; to: string; label?: string }[] };
    revision: number;
  };
const edgeList = (g: { edges: { from: string; to: string; label?: string }[] }) => g.edges.map((e) => `${e.from}-${e.label ?? ""}->${e.to}`);

const saved = (page: Page) => savedWithin(page, 20_000);

/** The canvas's zoom, read from the viewport's transform. */
const zoomOf = async (page: Page) =>
  page.locator(".react-flow__viewport").evaluate((el) => new DOMMatrixReadOnly(getComputedStyle(el).transform).a);

/** Every step's box on screen, read until two readings 100 ms apart agree (the view animates). */
async function settledBoxes(page: Page): Promise<Record<string, Box>> {
  const read = () =>
    page.locator(".react-flow__node").evaluateAll((els) =>
      Object.fromEntries(els.map((e) => [e.getAttribute("data-id"), (({ x, y, width, height }) => ({ x, y, width, height }))(e.getBoundingClientRect())])),
    );
  let last = JSON.stringify(await read());
  for (let i = 0; i < 50; i++) {
    await page.waitForTimeout(100);
    const now = JSON.stringify(await read());
    if (now === last) break;
    last = now;
  }
  return JSON.parse(last);
}

/** Scrolls the canvas (the wheel pans it) until the step is wholly on screen; false when it never gets there. */
async function scrollTo(page: Page, id: string, canvas: Box): Promise<boolean> {
  for (let i = 0; i < 20; i++) {
    const b = (await canvasStep(page, id).boundingBox()) as Box;
    if (inside(b, canvas)) return true;
    const dx = b.x + b.width / 2 - (canvas.x + canvas.width / 2);
    const dy = b.y + b.height / 2 - (canvas.y + canvas.height / 2);
    await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
    await page.mouse.wheel(Math.max(-400, Math.min(400, dx)), Math.max(-400, Math.min(400, dy)));
    await page.waitForTimeout(60);
  }
  return false;
}

describe("the full-window editor", () => {
  it("tidies 30 steps top to bottom at a readable zoom, scrolls to each, and inserts, duplicates, pastes and finds steps", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1280, height: 800 } });
    await page.goto(`${d.web.base}/automations/${bigId}?org=acme`);
    await canvasStep(page, "signup").waitFor();
    expect(await page.locator(".react-flow__node").count()).toBe(30);

    // A step selected (the drawer open), then Tidy.
    await canvasStep(page, "signup").click();
    await page.locator(".panel .step-drawer").waitFor();
    await page.getByRole("button", { name: "Tidy layout" }).click();
    await saved(page);
    const boxes = await settledBoxes(page);
    const canvas = (await page.locator(".canvas").boundingBox()) as Box;
    const palette = (await page.locator("aside.palette").boundingBox()) as Box;
    const drawer = (await page.locator("aside.panel").boundingBox()) as Box;
    const zoom = await zoomOf(page);
    const titlePx = await page.locator(".step-title").first().evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
    const share = (canvas.width * canvas.height) / (1280 * 800);
    console.log(
      `1280x800: canvas ${Math.round(canvas.width)}x${Math.round(canvas.height)} px (${Math.round(share * 100)}% of the window, drawer open); zoom after Tidy ${zoom.toFixed(3)}; a title is ${(titlePx * zoom).toFixed(1)} px on screen`,
    );
    // Readable: a title at least 12 px on screen.
    expect(titlePx * zoom).toBeGreaterThanOrEqual(12 - 1e-6);
    // No two steps overlap.
    const list = Object.entries(boxes);
    const overlapping = list.flatMap(([a, p], i) => list.slice(i + 1).filter(([, r]) => intersects(p, r)).map(([b]) => `${a}/${b}`));
    expect(overlapping).toEqual([]);
    // None lies under the palette or the drawer: every step is within the canvas's width, and none on screen touches them.
    for (const [id, b] of list) {
      expect(b.x >= canvas.x && b.x + b.width <= canvas.x + canvas.width, `${id} across the canvas's sides`).toBe(true);
      if (intersects(b, canvas)) expect(intersects(b, palette) || intersects(b, drawer), `${id} under the palette or the drawer`).toBe(false);
    }
    // The trigger is on screen after Tidy, and the view did not have to shrink below readable: the rest scrolls.
    expect(inside(boxes.signup as Box, canvas)).toBe(true);
    expect(list.filter(([, b]) => !inside(b, canvas)).length).toBeGreaterThan(0);
    await page.screenshot({ path: join(artifacts, "editor-graph-30.png") });
    // Scrolling reaches every step.
    const unreachable: string[] = [];
    for (const [id] of list) if (!(await scrollTo(page, id, canvas))) unreachable.push(id);
    expect(unreachable).toEqual([]);
    expect(await zoomOf(page)).toBeCloseTo(zoom, 5);
    // The minimap navigates: dragging in it moves the view.
    const before = await page.locator(".react-flow__viewport").evaluate((el) => getComputedStyle(el).transform);
    const mini = (await page.locator(".react-flow__minimap").boundingBox()) as Box;
    await page.mouse.move(mini.x + mini.width / 2, mini.y + mini.height / 2);
    await page.mouse.down();
    await page.mouse.move(mini.x + mini.width / 2, mini.y + 10, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => page.locator(".react-flow__viewport").evaluate((el) => getComputedStyle(el).transform)).not.toBe(before);

    // Fit: back to the top at the readable zoom.
    await page.locator(".react-flow__controls-fitview").click();
    await page.waitForTimeout(400);
    expect(await zoomOf(page)).toBeGreaterThanOrEqual(0.75 - 1e-6);

    // "+" on the edge signup -> fetch_1: a wait goes in between.
    await page.locator('.edge-insert[data-edge="signup->fetch_1"]').click();
    await page.locator('[data-chooser="kind"] [data-choice="wait"]').click();
    await canvasStep(page, "wait").waitFor();
    await saved(page);
    await expect.poll(async () => edgeList((await draftOf(bigId)).graph)).toEqual(expect.arrayContaining(["signup-->wait", "wait-->fetch_1"]));
    expect(edgeList((await draftOf(bigId)).graph)).not.toContain("signup-->fetch_1");

    // Deleted again: its neighbours are joined.
    await canvasStep(page, "wait").click();
    await page.keyboard.press("Delete");
    await expect.poll(() => canvasStep(page, "wait").count()).toBe(0);
    await saved(page);
    await expect.poll(async () => edgeList((await draftOf(bigId)).graph)).toContain("signup-->fetch_1");

    // Ctrl+D duplicates fetch_1: a new id, the same settings, no edges.
    await canvasStep(page, "fetch_1").click();
    await page.keyboard.press("Control+d");
    await canvasStep(page, "http_request").waitFor();
    await saved(page);
    await expect.poll(async () => (await draftOf(bigId)).graph.nodes.find((n) => n.id === "http_request")?.config).toEqual(
      (await draftOf(bigId)).graph.nodes.find((n) => n.id === "fetch_1")?.config,
    );

    // Copy fetch_2 and check_2 (shift-click selects both), paste: new ids, their edge kept, the check reads the copy.
    await page.keyboard.press("Control+k");
    await page.keyboard.type("fetch_2");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator(".react-flow__node.selected").getAttribute("data-id")).toBe("fetch_2");
    await canvasStep(page, "check_2").click({ modifiers: ["Shift"] });
    await expect.poll(() => page.locator(".react-flow__node.selected").count()).toBe(2);
    await page.keyboard.press("Control+c");
    await page.keyboard.press("Control+v");
    await canvasStep(page, "branch").waitFor();
    await saved(page);
    const pasted = (await draftOf(bigId)).graph;
    expect(pasted.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(["http_request_2", "branch"]));
    expect(pasted.nodes.find((n) => n.id === "branch")?.config).toEqual({ condition: { path: "steps.http_request_2.output.status", op: "eq", value: 200 } });
    expect(pasted.nodes.find((n) => n.id === "check_2")?.config).toEqual({ condition: { path: "steps.fetch_2.output.status", op: "eq", value: 200 } });
    expect(edgeList(pasted)).toContain("http_request_2-->branch");
    // The copies cover nothing.
    const afterPaste = Object.entries(await settledBoxes(page));
    expect(afterPaste.flatMap(([a, p], i) => afterPaste.slice(i + 1).filter(([, r]) => intersects(p, r)).map(([b]) => `${a}/${b}`))).toEqual([]);

    // Ctrl+K finds a step far down by its name; Enter selects it and brings it on screen.
    await page.keyboard.press("Control+k");
    await page.keyboard.type("Log the failure 5");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator(".react-flow__node.selected").getAttribute("data-id")).toBe("note_5");
    await expect.poll(async () => inside((await canvasStep(page, "note_5").boundingBox()) as Box, canvas)).toBe(true);
    await page.close();
  });

  it("the 9-step story fits the canvas at 1280x800 after Tidy, readable, and the palette's last item is not cut off", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1280, height: 800 } });
    await page.goto(`${d.web.base}/automations/${storyId}?org=acme`);
    await canvasStep(page, "trigger").waitFor();
    await page.getByRole("button", { name: "Tidy layout" }).click();
    await saved(page);
    const boxes = Object.entries(await settledBoxes(page));
    const canvas = (await page.locator(".canvas").boundingBox()) as Box;
    const zoom = await zoomOf(page);
    console.log(`the story: canvas ${Math.round(canvas.width)}x${Math.round(canvas.height)} px, zoom ${zoom.toFixed(3)}, ${boxes.filter(([, b]) => inside(b, canvas)).length} of 9 steps on screen`);
    expect(zoom).toBeGreaterThanOrEqual(0.75 - 1e-6);
    expect(boxes.flatMap(([a, p], i) => boxes.slice(i + 1).filter(([, r]) => intersects(p, r)).map(([b]) => `${a}/${b}`))).toEqual([]);
    expect(boxes.filter(([, b]) => !inside(b, canvas)).map(([id]) => id)).toEqual([]);
    // The palette scrolls to its last item.
    const last = page.locator(".palette-item").last();
    await last.scrollIntoViewIfNeeded();
    expect(inside((await last.boundingBox()) as Box, (await page.locator("aside.palette").boundingBox()) as Box)).toBe(true);
    await page.screenshot({ path: join(artifacts, "editor-story-9.png") });
    // The palette folds away (and back): the canvas takes its room.
    await page.getByRole("button", { name: "« Steps" }).click();
    await expect.poll(() => page.locator(".palette-item").count()).toBe(0);
    const wide = (await page.locator(".canvas").boundingBox()) as Box;
    console.log(`palette folded, no step selected: canvas ${Math.round(wide.width)}x${Math.round(wide.height)} px (${Math.round(((wide.width * wide.height) / (1280 * 800)) * 100)}% of the window)`);
    expect(wide.width).toBeGreaterThan(canvas.width + 100);
    await page.getByRole("button", { name: "»" }).click();
    await page.locator(".palette-item").first().waitFor();
    // "Add after" on the approval asks which output, and follows the answer.
    await canvasStep(page, "approval").click();
    await page.click('.palette-item[data-kind="http_request"]');
    const chooser = page.locator('[data-chooser="output"]');
    expect(await chooser.locator("button[data-choice]").allTextContents()).toEqual(["When approved", "When rejected"]);
    await page.screenshot({ path: join(artifacts, "editor-story-output-chooser.png") });
    await chooser.locator('[data-choice="rejected"]').click();
    await canvasStep(page, "http_request").waitFor();
    await saved(page);
    expect(edgeList((await draftOf(storyId)).graph)).toEqual(expect.arrayContaining(["approval-rejected->http_request", "http_request-->dropped", "approval-approved->send"]));
    // The variable picker opens inside the window, whole, even from the drawer's right edge.
    await canvasStep(page, "draft").click();
    const prompt = page.locator('.step-form .form-field[data-field="prompt"]');
    await prompt.getByRole("button", { name: /Insert variable/ }).click();
    const menu = (await prompt.locator(".var-picker-menu").boundingBox()) as Box;
    expect(inside(menu, { x: 0, y: 0, width: 1280, height: 800 }), JSON.stringify(menu)).toBe(true);
    await page.screenshot({ path: join(artifacts, "editor-story-variable-picker.png") });
    await page.close();
  });

  it("a save whose answer is lost says busy, saves by itself, and is never read as someone else's save", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1280, height: 800 } });
    await page.goto(`${d.web.base}/automations/${storyId}?org=acme`);
    await canvasStep(page, "wait").waitFor();
    const revision = (await draftOf(storyId)).revision;
    // The first save reaches the server (and is stored) but its answer never comes back; then the network fails once.
    let saves = 0;
    const seen: string[] = [];
    await page.route("**/api/trpc/**drafts.save**", async (route) => {
      saves += 1;
      if (saves === 1) {
        await route.fetch();
        return route.abort("connectionreset");
      }
      if (saves === 2) return route.fulfill({ status: 503, contentType: "text/plain", body: "upstream connect error: Prisma 53300 too many connections" });
      return route.continue();
    });
    const state = page.locator(".save-state");
    const watch = setInterval(() => void state.textContent().then((s) => s && seen.push(s), () => {}), 100);
    await canvasStep(page, "wait").click();
    await page.locator('.step-drawer input[name="node-id"]').waitFor();
    await page.keyboard.press("Control+d");
    await canvasStep(page, "wait_2").waitFor();
    await expect.poll(() => state.textContent()).toBe("Holdfast is busy; your change is kept and will be saved");
    await page.waitForSelector(".save-state.save-saved", { timeout: 40_000 });
    clearInterval(watch);
    expect(saves).toBeGreaterThanOrEqual(3);
    expect(seen.some((s) => /elsewhere/.test(s))).toBe(false);
    expect(await page.locator("body").textContent()).not.toMatch(/Prisma|53300|upstream|Failed to fetch/);
    const after = await draftOf(storyId);
    expect(after.graph.nodes.map((n) => n.id)).toContain("wait_2");
    // One stored save: the lost answer's save was this tab's own, taken as it was.
    expect(after.revision).toBe(revision + 1);
    await page.close();
  });
});
