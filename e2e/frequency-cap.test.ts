import { GraphCache, parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { advanceRun, StepRunner } from "@holdfast/core/run";
import { createLogger, lanes } from "@holdfast/core/base";
import { addMember, publish, screenshots, signedInPage, type SmtpTarget, startSmtpTarget, startTestDeployment, startTestRun, type TestDeployment } from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectStep } from "./fixtures/editor";

/**
 * The frequency cap in Chromium (issue 44, item 2): the owner sets "at most 1 email per contact every day" in
 * Settings, a viewer reads it without a form, the owner marks an automation transactional and an editor chooses skip
 * on the automation's page; a capped run's page says why. Screenshots: e2e/artifacts/frequency-cap-*.png.
 */
let d: TestDeployment;
let smtp: SmtpTarget;
let browser: Browser;
let orgId = "";
const ids: Record<string, string> = {};
const graphs = new GraphCache();
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shots = screenshots("frequency-cap");

const mailGraph = parseGraph({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "send", kind: "send_email", config: { connection: "mailbox", to: "{{input.email}}", subject: "Hi", text: "Hello" } },
    { id: "done", kind: "end" },
  ],
  edges: [
    { from: "t", to: "send" },
    { from: "send", to: "done" },
  ],
});

async function sendNow(automation: string, body: Record<string, unknown>) {
  const runId = await startTestRun(d.t.db, automation, body);
  await advanceRun(d.t.db, graphs, { orgId, runId, reason: "started" });
  const [{ id: stepId }] = await q("SELECT id FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]);
  const runner = new StepRunner({ db: d.t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 5_000, heartbeatMs: 1_500 }, log: createLogger("test", "silent") });
  await runner.run(stepId as string);
  return runId;
}

beforeAll(async () => {
  d = await startTestDeployment();
  smtp = await startSmtpTarget();
  for (const slug of ["welcome", "offers", "receipts"]) {
    const seeded = await publish(d.t.db, mailGraph, { automation: slug });
    orgId = seeded.orgId;
    ids[slug] = seeded.automationId;
  }
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "owner");
  await addMember(d.t.db, orgId, "eve@acme.test", "Eve", "editor");
  await addMember(d.t.db, orgId, "vic@acme.test", "Vic", "viewer");
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mailbox", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
  await d.startWeb({ LOG_LEVEL: "warn" });
  browser = await d.launchBrowser();
}, 300_000);

afterAll(async () => {
  await smtp?.close();
  await d?.stop();
});

async function tab(email: string): Promise<Page> {
  const page = await signedInPage(browser, d.web.base, email, { viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
  return page;
}

describe("the frequency cap in Chromium", () => {
  it("the owner sets it in Settings (a bad period is explained), a viewer reads it", async () => {
    const page = await tab("sam@acme.test");
    await page.goto(`${d.web.base}/settings`);
    const section = page.locator("section#frequency-cap");
    await expect.poll(() => section.textContent()).toContain("Off: no limit");
    await section.getByRole("radio", { name: "At most" }).check();
    await section.getByLabel("Most emails per contact").fill("1");
    await section.getByLabel("Period", { exact: true }).fill("5");
    await section.getByLabel("Period unit").selectOption("weeks");
    await section.getByRole("button", { name: "Save frequency cap" }).click();
    await expect.poll(() => section.textContent()).toContain("The period can be at most 30 days");
    await shots(section, "settings-bad-period");
    await section.getByLabel("Period", { exact: true }).fill("1");
    await section.getByLabel("Period unit").selectOption("days");
    await section.getByRole("button", { name: "Save frequency cap" }).click();
    await expect.poll(() => section.textContent()).toContain("On: at most 1 email per contact every day.");
    expect((await q("SELECT frequency_cap, updated_by FROM sending_rules WHERE org_id = $1", [orgId]))[0]).toEqual({
      frequency_cap: { count: 1, periodHours: 24 },
      updated_by: "user:sam@acme.test",
    });
    await expect.poll(() => section.textContent()).toContain("Last changed by sam@acme.test");
    await shots(section, "settings-owner");
    const vic = await tab("vic@acme.test");
    await vic.goto(`${d.web.base}/settings`);
    const read = vic.locator("section#frequency-cap");
    await expect.poll(() => read.textContent()).toContain("On: at most 1 email per contact every day.");
    expect(await read.getByRole("button", { name: "Save frequency cap" }).count()).toBe(0);
    await shots(read, "settings-viewer");
  });

  it("on the automation's page: the owner marks receipts transactional, an editor chooses skip", async () => {
    const sam = await tab("sam@acme.test");
    await sam.goto(`${d.web.base}/automations/${ids.receipts}`);
    await selectStep(sam, "t");
    await sam.getByLabel("Transactional: not capped", { exact: false }).click();
    await expect.poll(async () => (await q("SELECT transactional FROM automations WHERE id = $1", [ids.receipts]))[0]?.transactional).toBe(true);
    const eve = await tab("eve@acme.test");
    await eve.goto(`${d.web.base}/automations/${ids.offers}`);
    await selectStep(eve, "t");
    const box = eve.locator('[aria-label="frequency cap"]');
    await expect.poll(() => box.textContent()).toContain("The organisation's cap: at most 1 email per contact every day");
    expect(await box.getByLabel("Transactional: not capped", { exact: false }).isDisabled()).toBe(true);
    await box.getByLabel("Skip it", { exact: false }).click();
    await expect.poll(async () => (await q("SELECT capped_action FROM automations WHERE id = $1", [ids.offers]))[0]?.capped_action).toBe("skip");
    await shots(box, "automation-editor");
  });

  it("a capped send's run page says why: skipped by the cap, naming the send that filled it", async () => {
    await sendNow("welcome", { id: "w1", email: "lena@example.com" });
    await sendNow("receipts", { id: "r1", email: "lena@example.com" }); // transactional: goes out, not counted
    const capped = await sendNow("offers", { id: "o1", email: "lena@example.com" });
    expect(smtp.received.filter((m) => m.to.includes("lena@example.com"))).toHaveLength(2);
    const page = await tab("sam@acme.test");
    await page.goto(`${d.web.base}/runs/${capped}`);
    await expect
      .poll(() => page.locator("main").textContent())
      .toMatch(/Email to lena@example\.com not sent: frequency cap: at most 1 email per 24 hours to this address; one went out at .* from "welcome"; this automation skips sends over the cap/);
    await shots(page, "run-skipped");
  });

  it("a held send's timeline carries the cap's words and the instant (wait)", async () => {
    await q("UPDATE automations SET capped_action = 'wait' WHERE id = $1", [ids.offers]);
    await sendNow("welcome", { id: "w2", email: "max@example.com" });
    const waiting = await sendNow("offers", { id: "o2", email: "max@example.com" });
    const [event] = await q("SELECT data FROM run_events WHERE run_id = $1 AND type = 'step.deferred'", [waiting]);
    expect(event?.data.hold.words).toMatch(/^frequency cap: at most 1 email per 24 hours to this address; one went out at .* from "welcome"$/);
    const [counted] = await q("SELECT sent_at + interval '24 hours' AS until FROM contact_sends WHERE address = 'max@example.com'");
    expect(event?.data.hold.until).toBe(new Date(counted?.until as Date).toISOString());
    const page = await tab("sam@acme.test");
    await page.goto(`${d.web.base}/runs/${waiting}`);
    // The run page's story says until when and why, in the same words as quiet hours' holds.
    await expect
      .poll(() => page.locator("main").textContent())
      .toMatch(/Email held until .*: frequency cap: at most 1 email per 24 hours to this address; one went out at .* from "welcome"/);
    await shots(page, "run-held");
  });
});
