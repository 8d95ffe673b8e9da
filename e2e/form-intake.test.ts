/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page.evaluate callbacks below run in Chromium: their DOM types come from lib dom.
import { createAutomation, triggerSettings } from "@holdfast/core/versions";
import { addMember, publish, screenshots, signedInPage, startOnlyGraph, startTestDeployment, type TestDeployment } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Form intake through the built web app and a real database: a form tool's post (form-urlencoded, no webhook-id, no
 * id field) to a URL-token trigger starts a run; the same submission within the window gets the same run, after it a
 * new one; window 0 treats every submission as new; two identical posts at once start one run; a never-published
 * automation answers 409 saying to publish first. In Chromium: the list shows "Draft", the deliveries say how a
 * repeat was recognised (the key only under Details), and the runs page's empty state shows the real URL with its
 * token. Screenshots: e2e/artifacts/form-intake*.png.
 */
let d: TestDeployment;
const shot = screenshots("form-intake");
const tokens = {} as Record<"leads" | "every" | "drafty" | "signup" | "typed", string>;
const ids = {} as Record<"acme" | "quiet" | "leads" | "drafty" | "signup" | "typed", string>;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

const graph = startOnlyGraph;

/** A form tool's post: form-urlencoded fields, no webhook-id header. */
const submit = async (org: string, automation: keyof typeof tokens, fields: Record<string, string>) => {
  const res = await fetch(`${d.web.base}/api/hooks/${org}/${automation}/${tokens[automation]}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: (await res.json()) as { runId?: string; duplicate?: boolean; error?: { code: string; message: string } } };
};

/** Words no page may show outside a Details disclosure. */
const engineWords = ["start key", "sha256", "digest", "undefined", "[object Object]"];

/** The page's text outside <details> disclosures (and scripts). */
const shownText = (page: import("playwright-core").Page) =>
  page.evaluate(() => {
    const body = document.body.cloneNode(true) as HTMLElement;
    for (const hidden of body.querySelectorAll("details, script, style, template")) hidden.remove();
    return body.textContent ?? "";
  });

beforeAll(async () => {
  d = await startTestDeployment();
  const leads = await publish(d.t.db, graph({ eventIdField: "id" }), { org: "acme", automation: "leads", triggerAuth: "url_token" });
  const every = await publish(d.t.db, graph({ eventIdField: "id", duplicateWindowHours: 0 }), { org: "acme", automation: "every", triggerAuth: "url_token" });
  const typed = await publish(d.t.db, graph({}), { org: "acme", automation: "typed", triggerAuth: "url_token" });
  ids.typed = typed.automationId;
  tokens.typed = (await triggerSettings(d.t.db, typed.orgId, typed.automationId, "url_token")).urlToken;
  const signup = await publish(d.t.db, graph({ eventIdField: "id" }), { org: "quiet", automation: "signup", triggerAuth: "url_token" });
  Object.assign(ids, { acme: leads.orgId, quiet: signup.orgId, leads: leads.automationId, signup: signup.automationId });
  ids.drafty = (await d.t.db.$transaction((tx) => createAutomation(tx, { orgId: ids.acme, slug: "drafty", name: "Never published", triggerAuth: "url_token" }))).id;
  tokens.leads = (await triggerSettings(d.t.db, ids.acme, ids.leads, "url_token")).urlToken;
  tokens.every = (await triggerSettings(d.t.db, ids.acme, every.automationId, "url_token")).urlToken;
  tokens.drafty = (await triggerSettings(d.t.db, ids.acme, ids.drafty, "url_token")).urlToken;
  tokens.signup = (await triggerSettings(d.t.db, ids.quiet, ids.signup, "url_token")).urlToken;
  await addMember(d.t.db, ids.acme, "olivia@acme.test", "Olivia", "owner");
  await addMember(d.t.db, ids.quiet, "quinn@quiet.test", "Quinn", "owner");
  await d.startWeb({ LOG_LEVEL: "warn" });
}, 300_000);

afterAll(async () => d?.stop());

describe("a form post without an id header", () => {
  const maya = { email: "maya@example.com", name: "Maya", company: "Acme" };

  it("starts a run (202); the same submission again gets the same run (200); after the window a new one", async () => {
    const first = await submit("acme", "leads", maya);
    expect(first.status).toBe(202);
    expect(first.body.duplicate).toBe(false);
    const [run] = await q("SELECT input, status FROM runs WHERE id = $1", [first.body.runId]);
    expect(run.input).toEqual(maya);

    const again = await submit("acme", "leads", { name: "Maya", company: "Acme", email: "maya@example.com" });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ runId: first.body.runId, duplicate: true });

    // Another lead is another run.
    const other = await submit("acme", "leads", { ...maya, email: "max@example.com" });
    expect(other.status).toBe(202);
    expect(other.body.runId).not.toBe(first.body.runId);

    // The first run started 25 hours ago by the database clock: the 24-hour window is over.
    await q("UPDATE runs SET created_at = created_at - interval '25 hours' WHERE id = $1", [first.body.runId]);
    const later = await submit("acme", "leads", maya);
    expect(later.status).toBe(202);
    expect(later.body.runId).not.toBe(first.body.runId);
    expect((await submit("acme", "leads", maya)).body).toMatchObject({ runId: later.body.runId, duplicate: true });
  });

  it("uses the form's id field when it sends one", async () => {
    const a = await submit("acme", "leads", { ...maya, id: "sub_77" });
    const b = await submit("acme", "leads", { ...maya, id: "sub_77", name: "Maya B." });
    expect([a.status, b.status]).toEqual([202, 200]);
    expect(b.body.runId).toBe(a.body.runId);
  });

  it("starts exactly one run for two identical posts sent at the same time", async () => {
    const race = { email: "rae@example.com", name: "Rae", note: `race-${Date.now()}` };
    const answers = await Promise.all([submit("acme", "leads", race), submit("acme", "leads", race)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 202]);
    expect(answers[0].body.runId).toBe(answers[1].body.runId);
    const [{ n }] = await q("SELECT count(*)::int AS n FROM runs WHERE automation_id = $1 AND input->>'note' = $2", [ids.leads, race.note]);
    expect(n).toBe(1);
  });

  it("with window 0 starts a new run for every submission", async () => {
    const a = await submit("acme", "every", maya);
    const b = await submit("acme", "every", maya);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.runId).not.toBe(b.body.runId);
  });

  it("to a never-published automation answers 409 with a sentence saying to publish first, and starts nothing", async () => {
    const res = await submit("acme", "drafty", maya);
    expect(res.status).toBe(409);
    expect(res.body.error?.message).toBe('automation "drafty" is a draft: publish it first (Publish in its editor); deliveries are refused until it is published');
    const [{ n }] = await q("SELECT count(*)::int AS n FROM runs WHERE automation_id = $1", [ids.drafty]);
    expect(n).toBe(0);
  });
});

describe("in Chromium", () => {
  it("the list shows Draft, the deliveries say 'identical form' in words, the empty runs page shows the real URL with its token", async () => {
    const browser = await d.launchBrowser();
    try {
      const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1280, height: 800 } });
      await page.goto(`${d.web.base}/automations?org=acme`);
      const drafty = page.locator('tr[data-automation="drafty"] [data-lifecycle]');
      await expect.poll(() => drafty.textContent()).toBe("Draft");
      expect(await page.locator('tr[data-automation="leads"] [data-lifecycle]').textContent()).toBe("Active");
      await shot(page, "list");

      await page.goto(`${d.web.base}/automations/${ids.drafty}?org=acme`);
      await expect.poll(() => page.locator("[data-lifecycle-words]").textContent()).toBe("Draft: not published yet; deliveries are refused until you publish.");
      expect(await page.locator(".lifecycle [data-lifecycle]").textContent()).toBe("Draft");
      await shot(page, "draft");
      // Published: the bar says Active at once, and the same form post now starts a run.
      await page.getByRole("button", { name: "Publish", exact: true }).click();
      await expect.poll(() => page.locator("[data-lifecycle-words]").textContent()).toBe("Active: deliveries start runs.");
      expect((await submit("acme", "drafty", { email: "dora@example.com" })).status).toBe(202);

      await page.goto(`${d.web.base}/automations/${ids.leads}?org=acme`);
      await page.locator('[data-node="t"]').click();
      const log = page.locator('section[aria-label="recent deliveries"]');
      await expect.poll(async () => (await log.locator('tr[data-outcome="duplicate"]').first().textContent()) ?? "").toMatch(/Same submission as .+ \((identical form|same id sub_77)\)/);
      expect(await log.textContent()).toContain("(identical form)");
      expect(await page.locator("[data-duplicates]").textContent()).toContain("an identical submission within 24 hours");
      // The sample has no id field: the panel says so (and offers the usual ones to type).
      expect(await page.locator("[data-id-fields]").textContent()).toContain("none of the usual id fields");
      const text = await shownText(page);
      for (const word of engineWords) expect(text).not.toContain(word);
      await shot(page, "deliveries");
      await shot(log, "deliveries-log");

      // A form tool that sends submission_id: the panel lists it first, with its value, as the id field to choose.
      expect((await submit("acme", "typed", { submission_id: "sub_9", email: "tia@example.com" })).status).toBe(202);
      await page.goto(`${d.web.base}/automations/${ids.typed}?org=acme`);
      await page.locator('[data-node="t"]').click();
      await expect.poll(() => page.locator("[data-id-fields]").getAttribute("data-id-fields")).toBe("submission_id");
      expect(await page.locator("[data-id-fields]").textContent()).toContain("Your sample has submission_id");

      // Quinn's organisation has an automation and no run yet: the runs page shows a request to its real URL.
      const quiet = await signedInPage(browser, d.web.base, "quinn@quiet.test", { viewport: { width: 1280, height: 800 } });
      await quiet.goto(`${d.web.base}/`);
      const request = quiet.locator('[data-first-request="request"] [data-copy-text]');
      const curl = (await request.textContent()) ?? "";
      expect(curl).toContain(`${d.web.base}/api/hooks/quiet/signup/${tokens.signup}`);
      expect(curl).not.toContain("localhost:3000");
      const quietText = await shownText(quiet);
      for (const word of engineWords) expect(quietText).not.toContain(word);
      await shot(quiet, "runs-empty");

      // The request shown works as it is: the same fields posted to that URL start a run.
      const url = /'(http[^']+)'/.exec(curl)?.[1] as string;
      const fields = /-d '([^']+)'/.exec(curl)?.[1] as string;
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: fields });
      expect(res.status).toBe(202);
      await quiet.reload();
      await expect.poll(() => quiet.locator("tr[data-run]").count()).toBe(1);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
