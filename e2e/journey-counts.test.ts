import { signPayload } from "@holdfast/core/run";
import { triggerSettings } from "@holdfast/core/versions";
import { addMember, mailInPort, mailInSpec, productProcesses, publish, screenshots, signedInPage, type SmtpTarget, startHttpTarget, startTestDeployment, type TestDeployment, waitFor } from "@holdfast/testkit";
import { parseGraph } from "@holdfast/core/versions";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmailScan, expectedEmail, outcomesGraph, outcomesPaths, pathsMatcher, receivedBy, replyTo, scanEmails, scanPaths, shareWords, shownEmail, shownPaths, stepHeading, clickThrough } from "./fixtures/journey-outcomes";
import { connectedStoryStandIns } from "./fixtures/story";

/**
 * How a journey performs, in Chromium: an automation with an A/B split (path A waits a day, path B sends an email)
 * takes signed deliveries through the real web app and processes; the editor's "View: counts" shows on each step and
 * edge the counts the database's own rows give (a scan of steps and runs, never the read API), follows new runs
 * without a reload, and a click on a count lists exactly the runs behind it. Screenshots:
 * e2e/artifacts/journey-counts-*.png.
 */
let d: TestDeployment;
let browser: Browser;
let automationId = "";
let secret = "";
let orgId = "";
let smtp: SmtpTarget;
let mailIn = 0;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shot = screenshots("journey-counts");

/** The CRM path's service answers 404 (not found) to every call: its step fails at once, and so does the run. */
const crm = { url: "" };
const graphWith = (paths: Record<string, number>) =>
  parseGraph({
  nodes: [
    { id: "signup", kind: "trigger", name: "Signed up", config: { eventIdField: "id" } },
    { id: "pick", kind: "split", name: "Which welcome", config: { paths } },
    { id: "wait_a", kind: "wait", name: "Wait a day", config: { rule: { kind: "duration", seconds: 86_400 } } },
    { id: "send", kind: "send_email", name: "Send the welcome", config: { connection: "mail", subject: "Welcome", text: "Hello from Acme" } },
    { id: "notify", kind: "http_request", name: "Tell the CRM", config: { url: crm.url, method: "POST", body: { source: "welcome" }, maxAttempts: 1 } },
    { id: "end_c", kind: "end", name: "CRM told" },
    { id: "end_a", kind: "end", name: "Done after the wait" },
    { id: "end_b", kind: "end", name: "Welcomed" },
  ],
  edges: [
    { from: "signup", to: "pick" },
    { from: "pick", to: "wait_a", label: "A" },
    { from: "pick", to: "send", label: "B" },
    { from: "wait_a", to: "end_a" },
    { from: "send", to: "end_b" },
    { from: "pick", to: "notify", label: "C" },
    { from: "notify", to: "end_c" },
  ],
});

beforeAll(async () => {
  d = await startTestDeployment();
  const http = d.closeAtStop(await startHttpTarget());
  http.behave({ failFirst: Number.MAX_SAFE_INTEGER, failStatus: 404 });
  crm.url = http.url;
  const seeded = await publish(d.t.db, graphWith({ A: 40, B: 40, C: 20 }), { org: "acme", automation: "welcome" });
  automationId = seeded.automationId;
  secret = (await triggerSettings(d.t.db, seeded.orgId, automationId, "signed")).signingSecret;
  orgId = seeded.orgId;
  ({ smtp } = await connectedStoryStandIns(d, seeded.orgId));
  await addMember(d.t.db, seeded.orgId, "olivia@acme.test", "Olivia", "owner");
  await addMember(d.t.db, seeded.orgId, "vic@acme.test", "Vic", "viewer");
  await d.startWeb({ LOG_LEVEL: "warn" });
  // Links are rewritten through the web's signed redirect; replies come back through mail-in.
  await d.startApps([...productProcesses({ io: { HOLDFAST_PUBLIC_URL: d.web.base, INBOUND_EMAIL_DOMAIN: "reply.acme.test" }, human: {} }), mailInSpec], 90_000);
  mailIn = mailInPort(d.app("mail-in"));
  browser = await d.launchBrowser();
}, 300_000);
afterAll(async () => d?.stop());

let sent = 0;
/** `n` signed deliveries to the trigger, ten at a time, each a new contact: every one starts a run. */
async function deliver(n: number, to = { slug: "welcome", secret: () => secret }): Promise<void> {
  for (let done = 0; done < n; done += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, n - done) }, async () => {
        const i = ++sent;
        const id = `evt_${i}`;
        const body = JSON.stringify({ id, email: `lead${i}@example.com` });
        const at = Math.floor(Date.now() / 1000);
        const res = await fetch(`${d.web.base}/api/hooks/acme/${to.slug}`, {
          method: "POST",
          headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signPayload(to.secret(), id, at, body) },
          body,
        });
        if (res.status !== 202) throw new Error(`delivery ${id}: ${res.status} ${await res.text()}`);
      }),
    );
  }
}

/** Until every run has reached the day's wait (path A), its end (path B) or failed at the CRM (path C). */
async function settled(total: number): Promise<void> {
  await waitFor(
    async () => {
      const [r] = await q(
        `SELECT count(*)::int AS n FROM runs r WHERE NOT r.test AND (r.status IN ('completed', 'failed')
           OR EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.node_id = 'wait_a' AND s.status = 'waiting'))`,
      );
      return r.n === total;
    },
    90_000,
    `${total} runs at their wait or their end`,
  );
}

/** The database's own counts: a scan of the steps and runs tables (test runs apart), of one version or all. */
async function scanned(versionId: string | null = null) {
  const runs = "NOT r.test AND ($1::text IS NULL OR r.version_id = $1)";
  const steps = (where: string, n = "count(*)") => `(SELECT ${n}::int FROM steps s JOIN runs r ON r.id = s.run_id WHERE ${runs} AND ${where})`;
  const [row] = await q(
    `SELECT (SELECT count(*)::int FROM runs r WHERE ${runs}) AS started,
            (SELECT count(*)::int FROM runs r WHERE ${runs} AND r.status = 'completed') AS completed,
            (SELECT count(*)::int FROM runs r WHERE ${runs} AND r.status = 'running') AS running,
            ${steps("s.node_id = 'wait_a' AND s.status IN ('ready','running','waiting')")} AS wait_now,
            ${steps("s.node_id = 'wait_a' AND s.status = 'done'")} AS wait_passed,
            ${steps("s.node_id = 'send' AND s.status = 'done'")} AS send_passed,
            ${steps("s.node_id = 'send' AND s.status IN ('ready','running','waiting')")} AS send_now,
            ${steps("s.node_id = 'send' AND s.status = 'failed'")} AS send_failed,
            ${steps("s.node_id = 'wait_a'", "count(DISTINCT s.run_id)")} AS path_a,
            ${steps("s.node_id = 'send'", "count(DISTINCT s.run_id)")} AS path_b,
            ${steps("s.node_id = 'notify'", "count(DISTINCT s.run_id)")} AS path_c,
            ${steps("s.node_id = 'notify' AND s.status = 'failed'")} AS notify_failed,
            ${steps("s.node_id = 'notify' AND s.status = 'done'")} AS notify_passed`,
    [versionId],
  );
  return row as Record<"started" | "completed" | "running" | "wait_now" | "wait_passed" | "send_passed" | "send_now" | "send_failed" | "path_a" | "path_b" | "path_c" | "notify_failed" | "notify_passed", number>;
}

const num = (text: string | null) => Number((text ?? "").replace(/[^0-9]/g, ""));
const node = (page: Page, id: string) => page.locator(`.counts-canvas .react-flow__node[data-id="${id}"]`);
/** A step's count; failed, held and stopped are left off a step while they are zero. */
const stepCount = async (page: Page, id: string, what: string) => {
  const figure = node(page, id).locator(`[data-count="${what}"] b`);
  return (await figure.count()) === 0 ? 0 : num(await figure.textContent());
};
const edgeCount = async (page: Page, edge: string) => num((await page.locator(`.counts-canvas .edge-count[data-edge="${edge}"]`).textContent())?.replace(/^[ABC] · /, "") ?? "");

/**
 * The steps cut off at the counts canvas's left edge, and whether the top one is below its top edge: the first view
 * starts from the trigger and the leftmost step with room round them (a journey wider or taller than the canvas at a
 * readable zoom goes on to the right or below, and scrolls), as the editor's Fit does.
 */
const cutOff = (page: Page) =>
  page.evaluate(() => {
    const c = (document.querySelector(".counts-canvas") as HTMLElement).getBoundingClientRect();
    const boxes = [...document.querySelectorAll<HTMLElement>(".counts-canvas .react-flow__node")].map((n) => ({ id: n.dataset.id ?? "", r: n.getBoundingClientRect() }));
    return { left: boxes.filter((b) => b.r.left < c.left).map((b) => b.id), top: Math.min(...boxes.map((b) => b.r.top)) >= c.top };
  });

/** What the counts canvas shows, in the scan's terms. */
async function shown(page: Page) {
  return {
    started: await stepCount(page, "signup", "started"),
    wait_now: await stepCount(page, "wait_a", "now"),
    wait_passed: await stepCount(page, "wait_a", "passed"),
    send_passed: await stepCount(page, "send", "passed"),
    send_now: await stepCount(page, "send", "now"),
    send_failed: await stepCount(page, "send", "failed"),
    path_a: await edgeCount(page, "pick->wait_a:A"),
    path_b: await edgeCount(page, "pick->send:B"),
    path_c: await edgeCount(page, "pick->notify:C"),
    notify_failed: await stepCount(page, "notify", "failed"),
    notify_passed: await stepCount(page, "notify", "passed"),
    to_pick: await edgeCount(page, "signup->pick"),
    welcomed: await stepCount(page, "end_b", "arrived"),
  };
}

/** Every run the list shows, page after page ("Older runs"). */
async function listedRuns(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    out.push(...(await page.locator("table.runs tr[data-run]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run") ?? ""))));
    const older = page.getByRole("link", { name: "Older runs" });
    if ((await older.count()) === 0) return out;
    await page.goto(new URL((await older.getAttribute("href")) ?? "", d.web.base).toString());
    await page.waitForSelector("[data-runs-at]");
  }
}

const expected = (s: Awaited<ReturnType<typeof scanned>>) => ({
  started: s.started,
  wait_now: s.wait_now,
  wait_passed: s.wait_passed,
  send_passed: s.send_passed,
  send_now: s.send_now,
  send_failed: s.send_failed,
  path_a: s.path_a,
  path_b: s.path_b,
  path_c: s.path_c,
  notify_failed: s.notify_failed,
  notify_passed: s.notify_passed,
  to_pick: s.started,
  // Path B's runs end when their email is sent.
  welcomed: s.send_passed,
});

describe("the journey's counts on the canvas", () => {
  it("equal the database's own counts, follow new runs without a reload, and a count lists exactly its runs", async () => {
    await deliver(190);
    await settled(190);
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1440, height: 900 } });
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await page.getByRole("button", { name: "View: counts" }).click();
    await page.waitForSelector('.counts-canvas .react-flow__node[data-id="wait_a"] [data-count="now"]');
    const first = await scanned();
    // Both paths were taken, and the sends were done: the figures below are not zeros that happen to agree.
    expect(first.path_a).toBeGreaterThan(40);
    expect(first.path_b).toBeGreaterThan(40);
    expect(first.path_c).toBeGreaterThan(10);
    expect(first.path_a + first.path_b + first.path_c).toBe(190);
    expect(first.send_passed).toBe(first.path_b);
    expect(first.notify_failed).toBe(first.path_c);
    await expect.poll(() => shown(page)).toEqual(expected(first));
    expect(page.url()).toContain("view=counts");

    // The split's paths beside the canvas: the runs of each, and "replied" for none of them yet.
    const paths = page.locator('[data-section="split"][data-split="pick"]');
    expect(num(await paths.locator('tr[data-path="A"] [data-path-runs]').textContent())).toBe(first.path_a);
    expect(num(await paths.locator('tr[data-path="B"] [data-path-runs]').textContent())).toBe(first.path_b);
    expect(await paths.locator('tr[data-path="A"] [data-path-outcome]').textContent()).toMatch(/^0 \(0%\)95% sure: 0% to \d/);
    expect(num(await page.locator('[data-section="versions"] tr[data-version="1"] td').nth(1).textContent())).toBe(190);
    await shot(page, "canvas");

    // Ten more deliveries: the counts follow within a few seconds, with no reload.
    await deliver(10);
    await settled(200);
    const second = await scanned();
    expect(second.started).toBe(200);
    await expect.poll(() => shown(page), { timeout: 20_000 }).toEqual(expected(second));
    await shot(page.locator(".counts-view"), "refreshed");

    // A click on the wait's "now" lists exactly the runs waiting there, under the count it was.
    const waiting = (await q("SELECT s.run_id FROM steps s JOIN runs r ON r.id = s.run_id WHERE NOT r.test AND s.node_id = 'wait_a' AND s.status = 'waiting'")).map((r) => r.run_id as string);
    expect(waiting.length).toBe(second.wait_now);
    await node(page, "wait_a").locator('[data-count="now"]').click();
    await page.waitForSelector("[data-runs-at]");
    expect(await page.locator("h1").textContent()).toBe(`Runs at "Wait a day" now (${second.wait_now})`);
    await shot(page, "runs-at");
    const listed = await listedRuns(page);
    expect([...listed].sort()).toEqual([...waiting].sort());
    expect(new Set(listed).size).toBe(listed.length);

    // The send's "passed through": exactly the runs whose email went out.
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme&view=counts`);
    await node(page, "send").locator('[data-count="passed"]').click();
    await page.waitForSelector("[data-runs-at]");
    const sentRuns = (await q("SELECT s.run_id FROM steps s JOIN runs r ON r.id = s.run_id WHERE NOT r.test AND s.node_id = 'send' AND s.status = 'done'")).map((r) => r.run_id as string);
    expect(await page.locator("h1").textContent()).toBe(`Runs that passed through "Send the welcome" (${sentRuns.length})`);
    const sentListed = await listedRuns(page);
    expect([...sentListed].sort()).toEqual([...sentRuns].sort());

    // The CRM step's "failed": exactly the runs that failed there.
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme&view=counts`);
    await node(page, "notify").locator('[data-count="failed"]').click();
    await page.waitForSelector("[data-runs-at]");
    const failedRuns = (await q("SELECT s.run_id FROM steps s JOIN runs r ON r.id = s.run_id WHERE NOT r.test AND s.node_id = 'notify' AND s.status = 'failed'")).map((r) => r.run_id as string);
    expect(failedRuns.length).toBeGreaterThan(10);
    expect(await page.locator("h1").textContent()).toBe(`Runs that failed at "Tell the CRM" (${failedRuns.length})`);
    expect([...(await listedRuns(page))].sort()).toEqual([...failedRuns].sort());
  });

  it("show the newest version by default, any version or all of them, and conversion per version, to a viewer too", async () => {
    // Version 2 sends three in five contacts to the email; new runs take it.
    const v1 = (await q("SELECT id FROM automation_versions WHERE automation_id = $1 AND version = 1", [automationId]))[0].id as string;
    const v2 = (await publish(d.t.db, graphWith({ A: 20, B: 60, C: 20 }), { org: "acme", automation: "welcome" })).versionId;
    await deliver(20);
    await settled(220);
    const [one, two, all] = [await scanned(v1), await scanned(v2), await scanned()];
    expect([one.started, two.started, all.started]).toEqual([200, 20, 220]);

    const page = await signedInPage(browser, d.web.base, "vic@acme.test", { viewport: { width: 1440, height: 900 } });
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme&view=counts`);
    await page.waitForSelector('.counts-canvas .react-flow__node[data-id="wait_a"] [data-count="now"]');
    expect(await page.locator('select[name="counts-version"] option:checked').textContent()).toBe("Version 2 (newest)");
    await expect.poll(() => shown(page)).toEqual(expected(two));
    await page.selectOption('select[name="counts-version"]', "1");
    await expect.poll(() => shown(page)).toEqual(expected(one));
    await page.selectOption('select[name="counts-version"]', "all");
    await page.selectOption('select[name="counts-window"]', "all");
    await expect.poll(() => shown(page)).toEqual(expected(all));
    const versions = page.locator('[data-section="versions"]');
    expect(await versions.locator("tr[data-version]").evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent)))).toEqual([
      ["2", "20", "0 (0%)", String(two.running)],
      ["1", "200", "0 (0%)", String(one.running)],
    ]);
    expect(await page.locator(".counts-note").textContent()).toContain("drawn as version 2 (the newest)");
    // A viewer reads the counts; the editing buttons are not in this view.
    expect(await page.getByRole("button", { name: "Publish" }).count()).toBe(0);
    await shot(page, "all-versions");
  });
});

describe("a journey's email outcomes on the canvas", () => {
  it("clicks, replies and conversions equal the database's, per send step and per split path, and a step count lists exactly its runs", async () => {
    const seeded = await publish(d.t.db, outcomesGraph, { org: "acme", automation: "offers" });
    const offersId = seeded.automationId;
    const offersSecret = (await triggerSettings(d.t.db, orgId, offersId, "signed")).signingSecret;
    const mine = (sql: string) => q(sql, [offersId]);

    // Olivia makes a click on a link the automation's goal, on the automation page's goal form.
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1440, height: 900 } });
    await page.goto(`${d.web.base}/automations/${offersId}?org=acme`);
    const goal = page.locator("details.goal-panel");
    await goal.locator("summary").click();
    await goal.locator('input[name="goal"][value="clicked"]').check();
    await goal.getByRole("button", { name: "Save goal" }).click();
    await goal.getByText("Saved: a run converts when").waitFor();
    expect(await mine("SELECT goal FROM automations WHERE id = $1")).toEqual([{ goal: "clicked" }]);

    // 200 contacts sign up; each gets its path's email and waits for a reply.
    const signups = 200;
    const first = sent + 1;
    await deliver(signups, { slug: "offers", secret: () => offersSecret });
    await waitFor(
      async () => (await mine(`SELECT count(*)::int AS n FROM steps s JOIN runs r ON r.id = s.run_id WHERE r.automation_id = $1 AND s.node_id LIKE 'reply\\_%' AND s.status = 'waiting'`))[0].n === signups,
      90_000,
      `${signups} runs waiting for a reply`,
    );
    const mailTo = (i: number) => receivedBy(smtp, `lead${i}@example.com`);
    const contacts = Array.from({ length: signups }, (_, k) => first + k);
    const repliers = contacts.filter((i) => (i - first) % 3 === 1);
    const clickers = contacts.filter((i) => (i - first) % 3 === 0);

    // A third reply through mail-in, to the routing Reply-To of the email they received: their runs end "replied".
    await replyTo(mailIn, repliers.map(mailTo));
    const ended = async (status: string) => (await mine(`SELECT count(*)::int AS n FROM runs WHERE automation_id = $1 AND status = '${status}'`))[0].n as number;
    await waitFor(async () => (await ended("completed")) === repliers.length, 30_000, "the replied runs to end");

    // Another third follow the link in their email (a real GET of the web's redirect): the goal converts their runs.
    for (const i of clickers) {
      expect(await clickThrough(mailTo(i), d.web.base)).toMatch(/^302 https:\/\/shop\.example\.com\/offer\/[abc]$/);
    }
    await waitFor(async () => (await ended("converted")) === clickers.length, 30_000, "the clicked runs to convert");

    const emails = await scanEmails(q, offersId);
    const paths = await scanPaths(q, offersId);
    // Both big paths are over the 30 runs a rate needs and C is under it; every reply and click was recorded.
    expect(paths.A.n).toBeGreaterThanOrEqual(30);
    expect(paths.B.n).toBeGreaterThanOrEqual(30);
    expect(paths.C.n).toBeGreaterThan(0);
    expect(paths.C.n).toBeLessThan(30);
    expect(Object.values(emails).reduce((s, e) => s + e.replied, 0)).toBe(repliers.length);
    expect(Object.values(emails).reduce((s, e) => s + e.clicked, 0)).toBe(clickers.length);
    expect(outcomesPaths.reduce((s, p) => s + paths[p].converted, 0)).toBe(clickers.length);

    await page.goto(`${d.web.base}/automations/${offersId}?org=acme&view=counts`);
    await page.waitForSelector('.counts-canvas .react-flow__node[data-id="send_a"]');
    // At 1440x900 no step is cut off at the left or top edge, the leftmost end step included.
    await expect.poll(() => cutOff(page)).toEqual({ left: [], top: true });
    for (const p of outcomesPaths) {
      const e = emails[`send_${p.toLowerCase()}`] as EmailScan;
      await expect.poll(() => shownEmail(page, `Offer ${p}`)).toEqual(expectedEmail(e));
      expect(await node(page, `send_${p.toLowerCase()}`).locator("[data-email]").textContent()).toBe(
        `${e.sent} sent · ${shareWords(e.delivered, e.sent)} delivered · 0% opened · ${shareWords(e.clicked, e.delivered)} clicked`,
      );
    }
    await shot(page, "outcomes-canvas");
    for (const g of ["replied", "clicked", "converted"] as const) {
      await page.getByLabel("Compare paths by").selectOption(g);
      await expect.poll(() => shownPaths(page), { timeout: 20_000 }).toEqual(pathsMatcher(paths, g, (re) => expect.stringMatching(re)));
      await shot(page.locator('.counts-panel [data-section="split"]'), `outcomes-${g}`);
    }
    const converted = clickers.length;
    const running = await ended("running");
    expect(await page.locator('[data-section="versions"] tr[data-version="1"] td').allTextContents()).toEqual(["1", String(signups), `${converted} (${shareWords(converted, signups)})`, String(running)]);
    expect(await page.locator('[data-fact="converted"]').textContent()).toBe(`${converted} (${shareWords(converted, signups)} of started)`);

    // Path A's reply wait: "passed through" lists exactly the runs that replied on path A...
    const repliedA = (await mine(`SELECT m.run_id FROM email_messages m JOIN runs r ON r.id = m.run_id WHERE r.automation_id = $1 AND m.node_id = 'send_a' AND m.replied_at IS NOT NULL`)).map((r) => r.run_id as string);
    await node(page, "reply_a").locator('[data-count="passed"]').click();
    await page.waitForSelector("[data-runs-at]");
    expect(await page.locator("h1").textContent()).toBe(`Runs that passed through "Reply to offer A" (${repliedA.length})`);
    expect([...(await listedRuns(page))].sort()).toEqual([...repliedA].sort());
    await shot(page, "outcomes-runs-replied");

    // ...and the converted runs' wait (closed when they converted) shows them as "converted", not "stopped", listing
    // exactly them; nothing else stopped there.
    const convertedA = await mine(
      `SELECT s.status, array_agg(r.id) AS ids FROM runs r JOIN steps s ON s.run_id = r.id AND s.node_id = 'reply_a' WHERE r.automation_id = $1 AND r.status = 'converted' GROUP BY 1`,
    );
    expect(convertedA.map((r) => r.status)).toEqual(["cancelled"]);
    const ids = convertedA[0].ids as string[];
    expect(ids.length).toBe(paths.A.converted);
    await page.goto(`${d.web.base}/automations/${offersId}?org=acme&view=counts`);
    await expect.poll(() => stepCount(page, "reply_a", "converted")).toBe(ids.length);
    expect(await node(page, "reply_a").locator('[data-count="converted"]').textContent()).toBe(`${ids.length} converted`);
    expect(await node(page, "reply_a").locator('[data-count="cancelled"]').count()).toBe(0);
    await shot(page, "outcomes-canvas-converted");
    await node(page, "reply_a").locator('[data-count="converted"]').click();
    await page.waitForSelector("[data-runs-at]");
    expect(await page.locator("h1").textContent()).toBe(stepHeading("converted", "Reply to offer A", ids.length));
    expect([...(await listedRuns(page))].sort()).toEqual([...ids].sort());

    // The goal form's conversion per version says the same.
    await page.goto(`${d.web.base}/automations/${offersId}?org=acme`);
    await expect.poll(() => page.locator('table.conversion tr[data-version="1"] td').allTextContents()).toEqual(["1", String(signups), String(converted), shareWords(converted, signups)]);
    await goal.locator("summary").click();
    await shot(page, "outcomes-goal");
  });
});
