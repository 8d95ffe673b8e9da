import { createAutomation } from "@holdfast/core/versions";
import { getDraft, saveDraft } from "@holdfast/core/run";
import { inTx } from "@holdfast/db";
import {
  addMember,
  type CrmTarget,
  organisationWithOwner,
  type SmtpTarget,
  screenshots,
  signedInPage,
  startCrmTarget,
  startSmtpTarget,
  startTestDeployment,
  type TestDeployment,
} from "@holdfast/testkit";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionTargets, startConnectionTargets } from "../packages/testkit/src/connection-targets";
import { addStepAfter, canvasStep, pickVariable, saved, selectStep, stepField, } from "./fixtures/editor";

/**
 * A marketer builds Maya's automation in Chromium with forms only, no keystroke into any JSON field: the four
 * connections through their typed forms (Test connection red with a wrong secret, then green), then from an empty
 * canvas: form webhook -> wait until 09:00 on the next weekday in the lead's zone -> AI draft -> Sam approves (Slack
 * too) -> send -> wait for a reply -> update the CRM, variables picked from the picker, Tidy, Publish; then a
 * form-encoded delivery and a Test run from the trigger panel, both on the runs list. A second test shows the editor's
 * publish checks: each problem in the list, in words, and a click selects its node and field.
 */
let d: TestDeployment;
let browser: Browser;
let smtp: SmtpTarget;
let crm: CrmTarget;
let targets: ConnectionTargets;
let orgId: string;
const shot = screenshots("builder-forms");
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  orgId = await organisationWithOwner(d.t.db, { email: "olivia@acme.test", name: "Olivia" });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "approver");
  smtp = d.closeAtStop(await startSmtpTarget({ credentials: { user: "olivia@acme.test", pass: "mail password" } }));
  crm = d.closeAtStop(await startCrmTarget(["crm-token"]));
  targets = d.closeAtStop(await startConnectionTargets());
  await d.startWeb({ WAKEUPS: "poll" });
  browser = await d.launchBrowser();
});

afterAll(async () => d?.stop());

/** Picks `path` from the variable picker of the open step's field `name` (or of this part of a field). */
const pickVariableIn = (page: Page, name: string | Locator, path: string) => pickVariable(typeof name === "string" ? stepField(page, name) : name, path);

/** Fills a connection's typed form: Test red with `wrong`, then green with `right`, then Save. Returns the red sentence. */
async function fillConnection(page: Page, f: Locator, fill: (f: Locator) => Promise<void>, secretLabel: string, wrong: string, right: string, shotName: string) {
  await fill(f);
  await f.getByLabel(secretLabel, { exact: true }).fill(wrong);
  expect(await f.locator("textarea").count()).toBe(0);
  await f.getByRole("button", { name: "Test connection" }).click();
  const result = f.locator(".test-result");
  await result.waitFor();
  expect(await result.getAttribute("data-ok")).toBe("false");
  const red = (await result.textContent()) ?? "";
  expect(red).toMatch(/^✗ /);
  expect(red).not.toMatch(/Error:|ECONN|undefined|\{/);
  await shot(page, `${shotName}-test-red`);
  await f.getByLabel(secretLabel, { exact: true }).fill(right);
  await f.getByRole("button", { name: "Test connection" }).click();
  await expect.poll(() => result.textContent(), { timeout: 15_000 }).not.toBe(red);
  expect(await result.textContent()).toMatch(/^✓ /);
  await shot(page, `${shotName}-test-green`);
  await f.getByRole("button", { name: "Save connection" }).click();
  return red;
}

/** Adds a connection through Settings -> Connections. */
async function addConnection(page: Page, kind: string, fill: (f: Locator) => Promise<void>, secretLabel: string, wrong: string, right: string, shotName: string) {
  await page.goto(`${d.web.base}/settings`);
  // The fresh-clone CI once saw no picker after this click on a loaded machine (not reproduced in 52 loads with the
  // CPU slowed 4-6x and up to 400 ms of latency): click again while the button is still there and no kinds have
  // appeared, and say so in the log. A click that did open the picker hides the button, so a slow picker is waited
  // for, never clicked away.
  const add = page.getByRole("button", { name: "Add connection" });
  const card = page.locator(`button.kind-card[data-kind="${kind}"]`);
  const deadline = Date.now() + 45_000;
  for (let clicks = 0; !(await card.isVisible()); ) {
    if (Date.now() > deadline) throw new Error(`"Add connection" showed no kinds to pick within 45 s (${clicks} clicks)`);
    if (await add.isVisible()) {
      if (clicks > 0) console.log(`"Add connection" showed no kinds to pick within 5 s of click ${clicks}; clicking again`);
      // Waits for the page to hydrate (buttons take no clicks before); gone meanwhile means the picker opened.
      if (await add.click({ timeout: 10_000 }).then(() => true, () => false)) clicks++;
    }
    await card.waitFor({ timeout: 5_000 }).catch(() => {});
  }
  await card.click();
  const red = await fillConnection(page, page.locator("form.connection-form"), fill, secretLabel, wrong, right, shotName);
  await page.locator('[data-flash="ok"]').waitFor();
  return red;
}

describe("a marketer builds Maya's automation with forms only", () => {
  it("connections, the whole graph from an empty canvas, publish, a form-encoded delivery and a test run", async () => {
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1500, height: 1000 } });
    page.on("pageerror", (e) => console.log("pageerror:", e.message));

    // 1. Connections, each through its typed form, tested red then green before saving.
    const reds: string[] = [];
    reds.push(
      await addConnection(
        page,
        "smtp",
        async (f) => {
          await f.getByLabel("Name", { exact: true }).fill("mail");
          await f.getByLabel("Server", { exact: true }).fill("127.0.0.1");
          await f.getByLabel("Port", { exact: true }).fill(String(smtp.port));
          await f.getByLabel("Security", { exact: true }).selectOption("none");
          await f.getByLabel("User name", { exact: true }).fill("olivia@acme.test");
          await f.getByLabel("From address", { exact: true }).fill("Olivia at Acme <olivia@acme.test>");
        },
        "Password",
        "wrong password",
        "mail password",
        "1-smtp",
      ),
    );
    reds.push(
      await addConnection(
        page,
        "model",
        async (f) => {
          await f.getByLabel("Name", { exact: true }).fill("writer");
          await f.getByLabel("API base URL", { exact: true }).fill(targets.modelBaseUrl);
          await f.getByLabel("Model", { exact: true }).fill("gpt-4o-mini");
          await f.getByLabel("Price of input (US dollars per million tokens)", { exact: true }).fill("0.15");
          await f.getByLabel("Price of output (US dollars per million tokens)", { exact: true }).fill("0.60");
        },
        "API key",
        "sk-wrong",
        targets.modelKey,
        "2-model",
      ),
    );
    reds.push(
      await addConnection(
        page,
        "crm",
        async (f) => {
          await f.getByLabel("Name", { exact: true }).fill("crm");
          await f.getByLabel("API base URL", { exact: true }).fill(crm.baseUrl);
        },
        "API token",
        "not-the-token",
        "crm-token",
        "3-crm",
      ),
    );
    expect((await q("SELECT kind, name FROM connections WHERE org_id = $1 ORDER BY name", [orgId])).map((r) => `${r.kind}:${r.name}`)).toEqual([
      "crm:crm",
      "smtp:mail",
      "model:writer",
    ]);

    // 2. A new automation: an empty canvas (trigger -> end).
    await page.goto(`${d.web.base}/automations`);
    await page.fill('input[name="automation-name"]', "Maya follow-up");
    await page.click('button:has-text("Create")');
    await page.waitForURL(/\/automations\/aut_[0-9a-f]{32}\?org=acme/);
    const automationId = /aut_[0-9a-f]{32}/.exec(page.url())?.[0] as string;
    await canvasStep(page, "trigger").waitFor();
    await shot(page, "5-empty-canvas");

    // The trigger: the form tool sends its own submission id as "id" (the start key: a re-sent submission starts no
    // second run), and the contact's time zone in "timezone".
    await selectStep(page, "trigger");
    await stepField(page, "eventIdField").locator("input").fill("id");
    await stepField(page, "contactTimeZoneField").locator("input").fill("timezone");

    // 3. Wait until 09:00 on the next weekday in the lead's zone (the rule's sentence and the next three times).
    await addStepAfter(page, "trigger", "wait", "wait");
    await stepField(page, "zoneFrom").locator("input").fill("input.timezone");
    await stepField(page, "zone").locator("input").fill("Europe/Berlin");
    const sentence = page.locator('[data-testid="rule-sentence"]');
    await expect.poll(() => sentence.textContent()).toBe("Wait until 09:00 on the next weekday in the contact's time zone (input.timezone), else Europe/Berlin.");
    await page.locator('[data-testid="rule-preview"] li').nth(2).waitFor();
    const preview = await page.locator('[data-testid="rule-preview"] li').allTextContents();
    expect(preview).toHaveLength(3);
    for (const p of preview) expect(p).toMatch(/^(Mon|Tue|Wed|Thu|Fri) \d+ \w+ \d{4}, 09:00/);
    await shot(page, "6-wait-form");

    // 4. Draft with AI: the model picked from the organisation's model connections, the prompt with variables.
    await addStepAfter(page, "wait", "model_draft", "model_draft");
    await stepField(page, "connection").locator("select").selectOption("writer");
    const prompt = stepField(page, "prompt").locator("textarea");
    await prompt.fill("Write a short, friendly follow-up to ");
    await prompt.press("End");
    await pickVariableIn(page, "prompt", "contact.email");
    await expect.poll(() => prompt.inputValue()).toBe("Write a short, friendly follow-up to {{contact.email}}");
    await shot(page, "7-draft-form");

    // 5. Sam approves the drafted text (the variable offered because the draft runs on every path here), in Slack too.
    await addStepAfter(page, "model_draft", "approval", "approval");
    await stepField(page, "approvers").getByLabel(/Sam/).check();
    await stepField(page, "approvers").locator("select").selectOption("");
    await stepField(page, "title").locator("input").fill("Send this follow-up to ");
    await stepField(page, "title").locator("input").press("End");
    await pickVariableIn(page, "title", "contact.email");
    await pickVariableIn(page, "content", "steps.model_draft.output.text");
    // No Slack connection yet: "New Slack connection…" opens its form in place; saved, it is picked.
    await stepField(page, "slack.connection").locator("select").selectOption({ label: "+ New Slack connection…" });
    const dialog = page.getByRole("dialog");
    reds.push(
      await fillConnection(
        page,
        dialog.locator("form.connection-form"),
        async (f) => {
          await f.getByLabel("Name", { exact: true }).fill("slack");
          await f.getByLabel("Workspace ID", { exact: true }).fill(targets.slackTeamId);
          await f.locator("summary", { hasText: "More settings" }).click();
          await f.getByLabel("Slack API address", { exact: true }).fill(targets.slackApiUrl);
        },
        "Bot token",
        "xoxb-wrong",
        targets.slackToken,
        "8-slack-in-place",
      ),
    );
    await dialog.waitFor({ state: "detached" });
    await expect.poll(() => stepField(page, "slack.connection").locator("select").inputValue()).toBe("slack");
    console.log("Test connection with a wrong secret said:\n  %s", reds.join("\n  "));
    await stepField(page, "slack.channel").locator("input").fill("C0MARKETING");
    await shot(page, "9-approval-form");

    // 6. Send: through "mail", to the contact, the approved draft as the body.
    await addStepAfter(page, "approval", "send_email", "send_email", "approved");
    await stepField(page, "connection").locator("select").selectOption("mail");
    await stepField(page, "subject").locator("input").fill("Following up on your question");
    await pickVariableIn(page, "text", "steps.model_draft.output.text");
    await shot(page, "9b-send-form");

    // 7. Wait for a reply to that email, 3 days.
    await addStepAfter(page, "send_email", "wait_for_reply", "wait_for_reply");
    await stepField(page, "replyTo").locator("select").selectOption("send_email");
    await stepField(page, "timeoutSeconds").locator('input[type="number"]').fill("3");
    await stepField(page, "timeoutSeconds").locator("select").selectOption({ label: "days" });

    // 8. Update the CRM on both paths (reply and timeout): the reply's outcome is known on every path to it.
    await addStepAfter(page, "wait_for_reply", "crm_upsert", "crm_upsert", "reply");
    await stepField(page, "connection").locator("select").selectOption("crm");
    await stepField(page, "fields").getByRole("button", { name: /Add crm field/ }).click();
    await stepField(page, "fields").locator('input[name="fields.1.key"]').fill("last_outcome");
    await pickVariableIn(page, stepField(page, "fields").locator(".row-inline").nth(1), "steps.wait_for_reply.output.outcome");
    // The name shows whole in the drawer: its input is wide enough for the text typed in it.
    expect(await stepField(page, "fields").locator('input[name="fields.1.key"]').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await shot(page, "10-crm-form");

    // The outputs the palette did not wire, from the panel's "Then": rejected -> end, timeout -> crm.
    await selectStep(page, "approval");
    // The CRM field typed just before another step was selected reached the saved draft.
    const savedCrmFields = async () => {
      const [draft] = await q("SELECT graph FROM automation_drafts WHERE automation_id = $1", [automationId]);
      return draft?.graph.nodes.find((n: { id: string }) => n.id === "crm_upsert")?.config?.fields;
    };
    await expect.poll(savedCrmFields).toEqual({ email: "{{contact.email}}", last_outcome: "{{steps.wait_for_reply.output.outcome}}" });
    await page.selectOption('select[name="output-rejected"]', "end");
    await selectStep(page, "wait_for_reply");
    await page.selectOption('select[name="output-timeout"]', "crm_upsert");
    await page.click('button:has-text("Tidy layout")');
    await saved(page);
    await page.waitForTimeout(1000);
    await expect.poll(() => page.locator(".problems-count").textContent()).toBe("No problems");
    await shot(page, "11-tidy");

    // 9. Publish.
    await page.locator("button.primary", { hasText: "Publish" }).click();
    await page.waitForSelector("text=Published version 1.");
    await shot(page, "12-published");
    const [v1] = await q("SELECT graph FROM automation_versions WHERE automation_id = $1 AND version = 1", [automationId]);
    const byId = Object.fromEntries(v1.graph.nodes.map((n: { id: string; kind: string; config: unknown }) => [n.id, n]));
    expect(byId.wait.config).toMatchObject({ rule: { kind: "next_weekday", at: "09:00" }, zone: "Europe/Berlin", zoneFrom: "input.timezone" });
    expect(byId.model_draft.config).toMatchObject({ connection: "writer", prompt: "Write a short, friendly follow-up to {{contact.email}}" });
    expect(byId.approval.config).toMatchObject({
      approvers: { users: ["sam@acme.test"] },
      title: "Send this follow-up to {{contact.email}}",
      content: "{{steps.model_draft.output.text}}",
      slack: { connection: "slack", channel: "C0MARKETING" },
    });
    expect(byId.send_email.config).toMatchObject({ connection: "mail", to: "{{contact.email}}", text: "{{steps.model_draft.output.text}}" });
    expect(byId.wait_for_reply.config).toEqual({ replyTo: "send_email", timeoutSeconds: 3 * 86_400 });
    expect(byId.crm_upsert.config.fields).toEqual({ email: "{{contact.email}}", last_outcome: "{{steps.wait_for_reply.output.outcome}}" });
    expect(v1.graph.edges.map((e: { from: string; to: string; label?: string }) => `${e.from}-${e.label ?? ""}->${e.to}`).sort()).toEqual([
      "approval-approved->send_email",
      "approval-rejected->end",
      "crm_upsert-->end",
      "model_draft-->approval",
      "send_email-->wait_for_reply",
      "trigger-->wait",
      "wait-->model_draft",
      "wait_for_reply-reply->crm_upsert",
      "wait_for_reply-timeout->crm_upsert",
    ]);

    // 10. A form tool posts form data to the URL-token address (the trigger panel's mode and URL).
    await selectStep(page, "trigger");
    await page.selectOption('select[name="trigger-mode"]', "url_token");
    await expect.poll(() => page.locator('input[name="trigger-url"]').inputValue()).toMatch(/\/api\/hooks\/acme\/maya-follow-up\/[A-Za-z0-9_-]{40,}$/);
    const url = await page.locator('input[name="trigger-url"]').inputValue();
    const delivered = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ id: "form_1", email: "maya@example.com", timezone: "America/New_York", company: "Lumen" }).toString(),
    });
    if (delivered.status !== 202) console.log("delivery:", delivered.status, await delivered.clone().text());
    expect(delivered.status).toBe(202);
    const { runId: formRun } = (await delivered.json()) as { runId: string };
    await page.locator("text=maya@example.com").first().waitFor({ timeout: 15_000 }).catch(() => {});
    await shot(page, "13-trigger-panel-delivery");

    // The first accepted delivery is the sample: its fields are now in the picker.
    await selectStep(page, "send_email");
    await stepField(page, "subject").getByRole("button", { name: /Insert variable/ }).click();
    await stepField(page, "subject").locator('.var-option[data-path="input.company"]').waitFor();
    await shot(page, "14-picker-with-sample");
    await page.keyboard.press("Escape");

    // 11. Test run from the trigger panel.
    await selectStep(page, "trigger");
    // No confirmation: a test run sends nothing to anyone (its effects are simulated), and the panel says so.
    expect(await page.locator(".trigger-settings").last().textContent()).toContain("Nobody receives anything");
    await page.getByRole("button", { name: "Test run" }).click();
    await page.locator("text=Test run started").waitFor();
    const [testRun] = await q("SELECT id, test, input FROM runs WHERE org_id = $1 AND test ORDER BY created_at DESC LIMIT 1", [orgId]);
    expect(testRun.input).toMatchObject({ email: "maya@example.com", timezone: "America/New_York" });

    // 12. Both runs on the runs list, the test one marked.
    await page.goto(`${d.web.base}/?org=acme`);
    await page.locator(`a[href="/runs/${formRun}"]`).first().waitFor();
    await page.locator(`a[href="/runs/${testRun.id}"]`).first().waitFor();
    const testRow = page.locator("tr", { has: page.locator(`a[href="/runs/${testRun.id}"]`) });
    expect(await testRow.textContent()).toContain("Test");
    await shot(page, "15-runs-list");
    await page.close();
  });

  it("the editor shows each publish check's refusal on its node and field, and a click goes there", async () => {
    const { id: automationId } = await inTx(d.t.db, (tx) => createAutomation(tx, { orgId, slug: "broken", name: "Broken on purpose" }));
    const graph = {
      nodes: [
        { id: "trigger", kind: "trigger", config: { eventIdField: "id" }, position: { x: 0, y: 0 } },
        { id: "check", kind: "branch", config: { condition: { path: "input.plan", op: "eq", value: "pro" } }, position: { x: 240, y: 0 } },
        { id: "draft", kind: "model_draft", config: { connection: "nope", prompt: "Hi" }, position: { x: 480, y: -120 } },
        { id: "review", kind: "approval", config: { approvers: { users: ["stranger@else.test"] }, title: "Send?", content: "{{steps.draft.output.text}}", deadlineSeconds: 3600, slack: { connection: "mail", channel: "C1" } }, position: { x: 720, y: 0 } },
        { id: "send", kind: "send_email", config: { connection: "mail", to: "not an email", subject: "Hi", text: "Hello" }, position: { x: 960, y: 0 } },
        { id: "pause", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, zone: "Mars/Olympus" }, position: { x: 1200, y: 0 } },
        { id: "end", kind: "end", position: { x: 1440, y: 0 } },
        { id: "orphan", kind: "end", position: { x: 1440, y: 200 } },
      ],
      edges: [
        { from: "trigger", to: "check" },
        { from: "check", to: "draft", label: "true" },
        { from: "check", to: "review", label: "false" },
        { from: "draft", to: "review" },
        { from: "review", to: "send", label: "approved" },
        { from: "review", to: "end", label: "rejected" },
        { from: "send", to: "pause" },
        { from: "pause", to: "end" },
      ],
    };
    await saveDraft(d.t.db, orgId, automationId, graph, (await getDraft(d.t.db, orgId, automationId)).revision, "test");
    const page = await signedInPage(browser, d.web.base, "olivia@acme.test", { viewport: { width: 1500, height: 1000 } });
    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await canvasStep(page, "trigger").waitFor();
    // The zone's problem is a shape problem: it is listed alone first (the other checks need a valid shape).
    await page.locator(".problems-count").click();
    expect(await page.locator(".problems-list li").allTextContents()).toEqual([`◷ pause · Time zone"Mars/Olympus" is not a time zone (use an IANA name such as Europe/Berlin)`]);
    expect(await page.locator("button.primary", { hasText: "Publish" }).isDisabled()).toBe(true);
    expect(await page.locator(".publish-why").textContent()).toBe("Fix the problem first (click the count to see it).");
    await page.locator(".problems-list button").first().click();
    await expect.poll(() => page.locator(":focus").getAttribute("name")).toBe("zone");
    await shot(page, "16-zone-problem-selected");
    // Fixed in its field: the other six checks show, each on its node and field, in words.
    await stepField(page, "zone").locator("input").fill("Europe/Berlin");
    await saved(page);
    await expect.poll(() => page.locator(".problems-count").textContent()).toBe("6 problems");
    await page.locator(".problems-count").click();
    const listed = await page.locator(".problems-list li").allTextContents();
    expect(listed.sort()).toEqual(
      [
        `■ orphan${"nothing leads to this step from the trigger"}`,
        `✍ draft · Model${'there is no connection named "nope" in this organisation; add it in Settings -> Connections or pick another'}`,
        `✔ review · Post to Slack through${'"mail" is an SMTP connection; this step needs a Slack connection'}`,
        `✔ review · What they approve${'{{steps.draft.output.text}} refers to step "draft", which does not run on every path to this step'}`,
        `✔ review · Who may approve${'"stranger@else.test" is not a member of this organisation'}`,
        `✉ send · To${'"not an email" is neither an email address nor a template like {{contact.email}}'}`,
      ].sort(),
    );
    await shot(page, "17-problems-list");
    await page.locator('.problems-list button[data-problem-node="send"]').click();
    await expect.poll(() => page.locator(":focus").getAttribute("name")).toBe("to");
    expect(await page.locator(".react-flow__node.selected").getAttribute("data-id")).toBe("send");
    expect(await stepField(page, "to").locator(".field-error").first().textContent()).toBe('"not an email" is neither an email address nor a template like {{contact.email}}');
    await shot(page, "18-problem-selects-field");
    await page.close();
  });
});
