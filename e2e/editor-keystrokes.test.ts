import { createConnection } from "@holdfast/core/providers";
import { getDraft, saveDraft } from "@holdfast/core/run";
import { createAutomation } from "@holdfast/core/versions";
import { inTx } from "@holdfast/db";
import { organisationWithOwner, signedInPage, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saved, selectStep, stepField } from "./fixtures/editor";

/**
 * What a marketer types into a step's form is never lost: not when a variable picked into one field moves on to the
 * next field before the browser paints (a busy page paints late), not when a slow autosave answers while they type.
 * The picker puts `{{path}}` at the caret of the text as it is on screen. Both races are made certain here: the
 * page's next frames are held back, the save's answer is held back, until the test lets them go.
 */
let d: TestDeployment;
let browser: Browser;
let orgId: string;

const graph = {
  nodes: [
    { id: "trigger", kind: "trigger", config: {}, position: { x: 0, y: 0 } },
    { id: "hello", kind: "send_email", config: { connection: "mail", subject: "", text: "" }, position: { x: 240, y: 0 } },
    { id: "end", kind: "end", position: { x: 480, y: 0 } },
  ],
  edges: [
    { from: "trigger", to: "hello" },
    { from: "hello", to: "end" },
  ],
};

beforeAll(async () => {
  d = await startTestDeployment();
  orgId = await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: 2525, tls: "none", from: "olivia@acme.test" }, secret: null });
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => d?.stop());

/** A new automation whose draft is trigger -> email -> end; its editor open on the email step. */
async function openEmailStep(slug: string): Promise<{ page: Page; automationId: string }> {
  const { id: automationId } = await inTx(d.t.db, (tx) => createAutomation(tx, { orgId, slug, name: slug }));
  await saveDraft(d.t.db, orgId, automationId, graph, (await getDraft(d.t.db, orgId, automationId)).revision, "test");
  const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1500, height: 1000 } });
  page.on("pageerror", (e) => console.log("pageerror:", e.message));
  // The page's animation frames, held back while window.__frames.held (a busy page paints late).
  await page.addInitScript(() => {
    const frames = { held: false, queue: [] as FrameRequestCallback[] };
    (window as unknown as { __frames: typeof frames }).__frames = frames;
    const raf = window.requestAnimationFrame.bind(window);
    window.requestAnimationFrame = (cb) => (frames.held ? (frames.queue.push(cb), 0) : raf(cb));
  });
  return { page, automationId };
}

const holdFrames = (page: Page) => page.evaluate(() => void ((window as unknown as { __frames: { held: boolean } }).__frames.held = true));
const releaseFrames = (page: Page) =>
  page.evaluate(() => {
    const frames = (window as unknown as { __frames: { held: boolean; queue: FrameRequestCallback[] } }).__frames;
    frames.held = false;
    for (const cb of frames.queue.splice(0)) window.requestAnimationFrame(cb);
    return new Promise<void>((done) => window.requestAnimationFrame(() => done()));
  });

/** Opens the field's picker, searches for `path`'s last word, and clicks it. */
async function pick(page: Page, field: string, path: string): Promise<void> {
  const scope = stepField(page, field);
  await scope.getByRole("button", { name: /Insert variable/ }).click();
  await scope.locator(".var-picker-search").fill(path.split(".").at(-1) as string);
  await scope.locator(`.var-option[data-path="${path}"]`).click();
}

/** The email step's config as the draft holds it. */
async function savedEmail(automationId: string): Promise<Record<string, unknown>> {
  const draft = await getDraft(d.t.db, orgId, automationId);
  return (draft.graph as typeof graph).nodes.find((n) => n.id === "hello")?.config as Record<string, unknown>;
}

describe("keystrokes in the step form", () => {
  it("after a pick, what is typed into the next field lands there, even when the page paints late", async () => {
    const { page, automationId } = await openEmailStep("late-frames");
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await selectStep(page, "hello");
    const subject = stepField(page, "subject").locator("input");
    const text = stepField(page, "text").locator("textarea");
    await subject.click();
    await page.keyboard.type("A question for ");

    // The pick, then a click into the message and typing, all before the page's next frame.
    await holdFrames(page);
    await pick(page, "subject", "contact.email");
    await text.click();
    await releaseFrames(page);
    await page.keyboard.type("Hello ");
    await pick(page, "text", "contact.name");

    // Before the fix the late frame put the caret back into the subject: "Hello " went there, the message got only
    // "{{contact.name}}" (declared-fields.test.ts's flake, about 1 run in 6).
    expect(await text.inputValue()).toBe("Hello {{contact.name}}");
    expect(await subject.inputValue()).toBe("A question for {{contact.email}}");
    await saved(page, 15_000);
    expect(await savedEmail(automationId)).toMatchObject({ subject: "A question for {{contact.email}}", text: "Hello {{contact.name}}" });
    await page.close();
  });

  it("keeps every keystroke typed while a save is in flight, and picks at the caret into the text on screen", async () => {
    const { page, automationId } = await openEmailStep("slow-save");
    // Each autosave's answer waits until the test lets it go.
    let answer = () => {};
    let held = 0;
    await page.route(/\/api\/trpc\/[^?]*drafts\.save/, async (route) => {
      held += 1;
      await new Promise<void>((go) => {
        answer = go;
      });
      await route.continue();
    });
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await selectStep(page, "hello");
    const text = stepField(page, "text").locator("textarea");
    await text.click();
    await page.keyboard.type("Hello");
    await page.waitForSelector(".save-state.save-saving");
    await expect.poll(() => held).toBe(1);

    // While the save of "Hello" is held: more keystrokes, the caret moved back, a pick at the caret.
    await page.keyboard.type(" there!");
    await page.keyboard.press("ArrowLeft");
    await pick(page, "text", "contact.name");
    await page.keyboard.type(" and welcome");
    answer();
    expect(await text.inputValue()).toBe("Hello there{{contact.name}} and welcome!");

    // The answer to "Hello" changes nothing on screen; the next save carries the rest.
    await expect.poll(() => held, { timeout: 15_000 }).toBe(2);
    expect(await text.inputValue()).toBe("Hello there{{contact.name}} and welcome!");
    answer();
    await saved(page, 15_000);
    expect(await text.inputValue()).toBe("Hello there{{contact.name}} and welcome!");
    expect(await savedEmail(automationId)).toMatchObject({ text: "Hello there{{contact.name}} and welcome!" });
    await page.close();
  });
});
