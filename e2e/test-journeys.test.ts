import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { budgetsSetAllowed } from "@holdfast/core/store";
import { parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { upsertMember } from "@holdfast/core/people";
import {
  type AppProcess,
  type CrmTarget,
  createTestDatabase,
  createTestPrefix,
  launchChromium,
  type ModelTarget,
  publish,
  repoRoot,
  type SlackApi,
  type SmtpTarget,
  signInPage,
  spawnApp,
  startCrmTarget,
  startModelTarget,
  startSlackApi,
  startSmtpTarget,
  startWeb,
  type TestDatabase,
  testRedisUrl,
  waitFor,
  type WebServer,
} from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Trying a journey before it reaches anyone (issue 40), in Chromium against every real process and local SMTP,
 * model, CRM and Slack servers that count what reaches them. Sam previews the story's email with the sample, starts
 * a Test run whose clock starts on Friday 26 March 2027 (the lead is in Berlin, where summer time starts on Sunday
 * the 28th), sees the wait's virtual 09:00 on Monday (07:00 UTC, not 08:00), and plays it to the end with approve and
 * a reply: the run completes at once. Nothing reaches the SMTP server, the CRM or Slack, and Lena's stored contact
 * is unchanged. Then "Send to me" delivers exactly one message, to Sam; and a CRM answering 500 takes the retry and
 * fail path, the run page saying the answer was simulated. Screenshots: e2e/artifacts/test-journey-*.png.
 */
const password = "correct horse battery";
let t: TestDatabase;
let smtp: SmtpTarget;
let model: ModelTarget;
let crm: CrmTarget;
let slack: SlackApi;
let web: WebServer;
let apps: AppProcess[] = [];
let browser: Browser;
let page: Page;
let orgId = "";
let automationId = "";
const prefix = createTestPrefix();
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;
const artifacts = join(repoRoot, "e2e/artifacts");
const shot = (name: string) => page.screenshot({ path: join(artifacts, `test-journey-${name}.png`), fullPage: true });

/** The product's own story: form -> 09:00 next weekday in the lead's zone -> draft -> Sam approves -> send -> reply -> CRM. */
const story = () =>
  parseGraph({
    nodes: [
      { id: "trigger", kind: "trigger", name: "Form submitted", config: { eventIdField: "id", contactEmailField: "email", contactTimeZoneField: "timezone" } },
      { id: "wait", kind: "wait", name: "Next weekday 09:00", config: { rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.timezone", zone: "Europe/Berlin" } },
      { id: "draft", kind: "model_draft", name: "Draft the follow-up", config: { connection: "writer", prompt: "Write a short follow-up to {{input.name}} about {{input.question}}", maxTokens: 200 } },
      {
        id: "approval",
        kind: "approval",
        name: "Sam approves",
        config: {
          approvers: { users: ["sam@acme.test"] },
          title: "Send this follow-up to {{contact.email}}?",
          content: "{{steps.draft.output.text}}",
          deadlineSeconds: 86_400,
          slack: { connection: "slack", channel: "C0MARKETING" },
        },
      },
      { id: "send", kind: "send_email", name: "Send the follow-up", config: { connection: "mail", subject: "About {{input.question}}, {{input.name}}", text: "Hi {{input.name}},\n\n{{steps.draft.output.text}}" } },
      { id: "reply", kind: "wait_for_reply", name: "Wait for a reply", config: { replyTo: "send", timeoutSeconds: 3 * 86_400 } },
      { id: "crm", kind: "crm_upsert", name: "Update the CRM", config: { connection: "crm", object: "contact", fields: { email: "{{contact.email}}", last_outcome: "{{steps.reply.output.outcome}}" }, maxAttempts: 2 } },
      { id: "done", kind: "end", name: "Done" },
      { id: "dropped", kind: "end", name: "Not sent" },
    ],
    edges: [
      { from: "trigger", to: "wait" },
      { from: "wait", to: "draft" },
      { from: "draft", to: "approval" },
      { from: "approval", to: "send", label: "approved" },
      { from: "approval", to: "dropped", label: "rejected" },
      { from: "send", to: "reply" },
      { from: "reply", to: "crm", label: "reply" },
      { from: "reply", to: "crm", label: "timeout" },
      { from: "crm", to: "done" },
    ],
  });

const sample = { id: "evt_sample", email: "lena@example.com", name: "Lena", timezone: "Europe/Berlin", question: "the annual plan" };

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  t = await createTestDatabase();
  smtp = await startSmtpTarget({ credentials: { user: "sam@acme.test", pass: "mail password" } });
  model = await startModelTarget("sk-writer");
  crm = await startCrmTarget(["crm-token"]);
  slack = await startSlackApi();
  ({ orgId, automationId } = await publish(t.db, story(), { automation: "story", triggerAuth: "url_token" }));
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "Sam at Acme <sam@acme.test>", user: "sam@acme.test" }, secret: "mail password" });
  await createConnection(t.db, { orgId, kind: "model", name: "writer", config: { baseUrl: model.baseUrl, model: "gpt-4o-mini", inputMicrosPerMTok: 150_000, outputMicrosPerMTok: 600_000 }, secret: "sk-writer" });
  await createConnection(t.db, { orgId, kind: "crm", name: "crm", config: { baseUrl: crm.baseUrl }, secret: "crm-token" });
  await createConnection(t.db, { orgId, kind: "slack", name: "slack", config: { teamId: slack.teamId, apiUrl: slack.apiUrl }, secret: slack.token });
  await budgetsSetAllowed(t.db, orgId, 5_000_000, "test");
  await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password, role: "owner", slackUserId: "U0SAM" });
  await q("UPDATE automations SET sample_input = $2::jsonb WHERE id = $1", [automationId, JSON.stringify(sample)]);
  // Lena is a stored contact (consent granted, in Berlin): nothing a test run does may change her.
  await q("INSERT INTO contacts (org_id, email, time_zone, consent) VALUES ($1, 'lena@example.com', 'Europe/Berlin', 'granted')", [orgId]);
  const env = { DATABASE_URL: t.url, REDIS_URL: testRedisUrl, QUEUE_PREFIX: prefix.prefix, LOG_LEVEL: "info" };
  web = await startWeb({ ...env });
  apps = [
    spawnApp("relay", { env: { ...env, RELAY_POLL_MS: "200" } }),
    spawnApp("engine", { env }),
    spawnApp("lane-worker", { env: { ...env, LANE: "io" } }),
    spawnApp("lane-worker", { env: { ...env, LANE: "slow" } }),
    spawnApp("lane-worker", { env: { ...env, LANE: "human", HOLDFAST_PUBLIC_URL: web.base } }),
    spawnApp("sweeper", { env: { ...env, SWEEP_INTERVAL_MS: "500" } }),
  ];
  await Promise.all(apps.map((a) => a.waitForOutput(/ready/, 90_000)));
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "Europe/Berlin" });
  page = await context.newPage();
  page.on("pageerror", (e) => console.log("pageerror:", e.message));
  await signInPage(page, web.base, "sam@acme.test", password);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await Promise.all(apps.map((a) => a.stop()));
  await Promise.all([smtp?.close(), model?.close(), crm?.close(), slack?.close()]);
  await prefix.clear();
  await t?.drop();
});

const lena = async () => (await q("SELECT email, time_zone, consent, updated_at FROM contacts WHERE org_id = $1 AND email = 'lena@example.com'", [orgId]))[0];
const statusOf = async (runId: string) => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status as string;

/** The trigger's panel: "Test run choices", then Test run; the new run's id. */
async function startTestRun(choose: (p: Page) => Promise<void> = async () => {}): Promise<string> {
  await page.goto(`${web.base}/automations/${automationId}?org=acme`);
  await page.locator('.react-flow__node[data-id="trigger"]').click();
  await page.getByText("Test run choices").click();
  await choose(page);
  const before = (await q("SELECT count(*)::int AS n FROM runs WHERE org_id = $1 AND test", [orgId]))[0].n as number;
  await page.getByRole("button", { name: "Test run", exact: true }).click();
  await page.locator("text=Test run started").waitFor();
  await waitFor(async () => (await q("SELECT count(*)::int AS n FROM runs WHERE org_id = $1 AND test", [orgId]))[0].n > before, 10_000, "the test run");
  return (await q("SELECT id FROM runs WHERE org_id = $1 AND test ORDER BY created_at DESC LIMIT 1", [orgId]))[0].id as string;
}

describe("trying the story", () => {
  it("previews the email, plays a test run across a DST change to its end at once, and nothing reaches anyone", async () => {
    const before = await lena();
    // 1. Preview with the stored sample: the email as Lena would read it.
    await page.goto(`${web.base}/automations/${automationId}?org=acme`);
    await page.locator('.react-flow__node[data-id="trigger"]').waitFor();
    await page.getByRole("tab", { name: "Preview" }).click();
    const send = page.locator('section.preview [data-preview-step="send"]');
    await expect.poll(() => send.locator("[data-email-subject]").textContent()).toBe("About the annual plan, Lena");
    expect(await send.locator("[data-email-body]").textContent()).toMatch(/^Hi Lena,\n\n/);
    expect(await send.locator("[data-email-to]").textContent()).toBe("lena@example.com");
    await send.scrollIntoViewIfNeeded();
    await shot("1-preview");

    // 2. A test run whose clock starts on Friday 26 March 2027, 18:00 in Berlin (CET, UTC+1).
    const runId = await startTestRun(async (p) => {
      await p.locator('input[name="clock-starts-at"]').fill("2027-03-26T18:00");
    });
    await page.goto(`${web.base}/runs/${runId}`);
    const panel = page.locator('section[aria-label="test run"]');
    const wait = panel.locator('[data-waiting="wait"]');
    await wait.waitFor();
    // Summer time starts on Sunday the 28th: Monday 09:00 in Berlin is 07:00 UTC, not 08:00.
    expect(await wait.locator("[data-would-fire]").getAttribute("data-would-fire")).toBe("2027-03-29T07:00:00.000Z");
    expect(await wait.textContent()).toContain("Mon 29 Mar 09:00 Europe/Berlin (07:00 UTC)");
    await shot("2-test-run-waiting");

    // 3. Play to the end: skip the wait, approve as Sam, reply; the run completes without waiting for any due instant.
    const started = Date.now();
    await panel.getByRole("button", { name: "Play to the end" }).click();
    await panel.locator('[data-played="finished"]').waitFor({ timeout: 60_000 });
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(await statusOf(runId)).toBe("completed");
    const played = await panel.locator('[data-played="finished"]').textContent();
    expect(played).toContain("Skipped the wait at \"wait\" to 2027-03-29T07:00:00.000Z (Europe/Berlin)");
    expect(played).toMatch(/Approved "Send this follow-up to lena@example.com\?" as Sam/);
    expect(played).toContain('Replied at "reply"');
    await page.reload();
    await shot("3-test-run-done");
    // Branches followed the data: the reply was taken as a reply, the CRM write recorded with it.
    const crmStep = (await q("SELECT output FROM steps WHERE run_id = $1 AND node_id = 'crm'", [runId]))[0];
    expect(crmStep.output).toMatchObject({ testRun: true, request: { method: "PUT", body: { fields: { email: "lena@example.com", last_outcome: "reply" } } } });
    const sent = (await q("SELECT output FROM steps WHERE run_id = $1 AND node_id = 'send'", [runId]))[0];
    expect(sent.output).toMatchObject({ simulated: true, to: "lena@example.com", subject: "About the annual plan, Lena" });
    // The approval asked nobody: no Slack post, nothing in the inbox.
    await page.goto(`${web.base}/approvals?org=acme`);
    expect(await page.locator("main").textContent()).not.toContain("Send this follow-up");

    // Nothing reached anyone; Lena is as she was. (The model was called: trying the wording is the point.)
    expect(smtp.received).toHaveLength(0);
    expect(crm.upserts.size).toBe(0);
    expect(slack.posts).toBe(0);
    expect(model.calls).toBe(1);
    expect(await lena()).toEqual(before);
  }, 240_000);

  it('"Send to me" delivers exactly one message, to the tester, none to the contact', async () => {
    const runId = await startTestRun(async (p) => {
      await p.locator('input[name="send-to-me"]').check();
      await p.locator('input[name="model-calls"]').uncheck();
    });
    await page.goto(`${web.base}/runs/${runId}`);
    await page.locator('section[aria-label="test run"]').getByRole("button", { name: "Play to the end" }).click();
    await page.locator('[data-played="finished"]').waitFor({ timeout: 60_000 });
    expect(await statusOf(runId)).toBe("completed");
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]?.to).toEqual(["sam@acme.test"]);
    expect(smtp.received[0]?.subject).toBe("[Test] About the annual plan, Lena");
    expect(crm.upserts.size).toBe(0);
    expect(slack.posts).toBe(0);
    expect(model.calls).toBe(1); // no model call this time: a canned draft
  }, 180_000);

  it("a simulated CRM 500 takes the retry and fail path, and the run page says the answer was simulated", async () => {
    const runId = await startTestRun(async (p) => {
      await p.locator('select[name="answer-crm"]').selectOption("fail");
      await p.locator('input[name="model-calls"]').uncheck();
    });
    await page.goto(`${web.base}/runs/${runId}`);
    await page.locator('section[aria-label="test run"]').getByRole("button", { name: "Play to the end" }).click();
    await waitFor(async () => (await statusOf(runId)) === "failed", 90_000, "the run to fail on the simulated CRM answer");
    const crmStep = (await q("SELECT status, attempt, error FROM steps WHERE run_id = $1 AND node_id = 'crm'", [runId]))[0];
    expect(crmStep).toMatchObject({ status: "failed", attempt: 2 });
    expect(crmStep.error.message).toMatch(/^Simulated answer \(test run\): PUT .* answered 500/);
    await page.reload();
    await expect.poll(() => page.locator("main").textContent()).toContain("Simulated answer (test run)");
    await shot("4-simulated-crm-500");
    expect(crm.upserts.size).toBe(0);
    expect(smtp.received).toHaveLength(1); // only the one "Send to me" of the test before
  }, 180_000);
});
