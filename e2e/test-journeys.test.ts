import { upsertMember } from "@holdfast/core/people";
import { publish, screenshots, signedInPage, productProcesses, startTestDeployment, type TestDeployment, testPassword, waitFor } from "@holdfast/testkit";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectedStoryStandIns, type StoryStandIns, storyGraph } from "./fixtures/story";

/**
 * Trying a journey before it reaches anyone (issue 40), in Chromium against every real process and local SMTP,
 * model, CRM and Slack servers that count what reaches them. Sam previews the story's email with the sample, starts
 * a Test run whose clock starts on Friday 26 March 2027 (the lead is in Berlin, where summer time starts on Sunday
 * the 28th), sees the wait's virtual 09:00 on Monday (07:00 UTC, not 08:00), and plays it to the end with approve and
 * a reply: the run completes at once. Nothing reaches the SMTP server, the CRM or Slack, and Lena's stored contact
 * is unchanged. Then "Send to me" delivers exactly one message, to Sam; and a CRM answering 500 takes the retry and
 * fail path, the run page saying the answer was simulated. Screenshots: e2e/artifacts/test-journey-*.png.
 */
let d: TestDeployment;
let smtp: StoryStandIns["smtp"];
let model: StoryStandIns["model"];
let crm: StoryStandIns["crm"];
let slack: StoryStandIns["slack"];
let page: Page;
let orgId = "";
let automationId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shots = screenshots("test-journey");
const shot = (name: string) => shots(page, name);

/** The product's own story: form -> 09:00 next weekday in the lead's zone -> draft -> Sam approves -> send -> reply -> CRM. */
const story = () =>
  storyGraph({
    prompt: "Write a short follow-up to {{input.name}} about {{input.question}}",
    subject: "About {{input.question}}, {{input.name}}",
    text: "Hi {{input.name}},\n\n{{steps.draft.output.text}}",
    crmAttempts: 2,
  });

const sample = { id: "evt_sample", email: "lena@example.com", name: "Lena", timezone: "Europe/Berlin", question: "the annual plan" };

beforeAll(async () => {
  d = await startTestDeployment();
  ({ orgId, automationId } = await publish(d.t.db, story(), { automation: "story", triggerAuth: "url_token" }));
  ({ smtp, model, crm, slack } = await connectedStoryStandIns(d, orgId));
  await upsertMember(d.t.db, { orgId, email: "sam@acme.test", name: "Sam", password: testPassword, role: "owner", slackUserId: "U0SAM" });
  await q("UPDATE automations SET sample_input = $2::jsonb WHERE id = $1", [automationId, JSON.stringify(sample)]);
  // Lena is a stored contact (consent granted, in Berlin): nothing a test run does may change her.
  await q("INSERT INTO contacts (org_id, email, time_zone, consent) VALUES ($1, 'lena@example.com', 'Europe/Berlin', 'granted')", [orgId]);
  const web = await d.startWeb();
  await d.startApps(productProcesses({ io: {}, slow: {}, human: { HOLDFAST_PUBLIC_URL: web.base } }), 90_000);
  page = await signedInPage(await d.launchBrowser(), web.base, "sam@acme.test", { viewport: { width: 1280, height: 900 }, timezoneId: "Europe/Berlin" });
  page.on("pageerror", (e) => console.log("pageerror:", e.message));
}, 300_000);

afterAll(async () => d?.stop());

const lena = async () => (await q("SELECT email, time_zone, consent, updated_at FROM contacts WHERE org_id = $1 AND email = 'lena@example.com'", [orgId]))[0];
const statusOf = async (runId: string) => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status as string;

/** The trigger's panel: "Test run choices", then Test run; the new run's id. */
async function startTestRun(choose: (p: Page) => Promise<void> = async () => {}): Promise<string> {
  await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
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
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
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
    await page.goto(`${d.web.base}/runs/${runId}`);
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
    await page.goto(`${d.web.base}/approvals?org=acme`);
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
    await page.goto(`${d.web.base}/runs/${runId}`);
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
    await page.goto(`${d.web.base}/runs/${runId}`);
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
