import { triggerSettings } from "@holdfast/core/versions";
import { approveActionId, upsertMember } from "@holdfast/core/people";
import { signPayload } from "@holdfast/core/run";
import {
  mailInPort,
  mailInSpec,
  productProcesses,
  publish,
  screenshots,
  signedInPage,
  slackInteraction,
  startTestDeployment,
  type TestDeployment,
  testPassword,
  waitFor,
} from "@holdfast/testkit";
import { DateTime } from "luxon";
import nodemailer from "nodemailer";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectedStoryStandIns, type StoryStandIns, storyGraph } from "./fixtures/story";

/**
 * Maya's story, whole, through every real process (built web app, relay, engine, sweeper, the io, slow and human
 * lanes, the SMTP receiver) and local SMTP, model, CRM and Slack servers, with Sam working in Chromium:
 *
 * Sam stores three leads' time zones in Settings. A form tool posts each lead to the signed webhook (no zone in the
 * payload): each run waits until 09:00 on the next weekday in the contact's stored zone. Jonas unsubscribes while he
 * waits (Sam records it on the suppression list). The test moves time (the timers' due instants are set to the
 * database's now(); nothing is waited). The model drafts each email; Sam approves Lena's with a signed Slack click and
 * Kim's and Jonas's in the web inbox. Lena and Kim get the email with a routing Reply-To; Jonas's is skipped and his
 * run says why. Lena and Kim reply through the SMTP receiver; the CRM is updated (Kim's update is refused once, the
 * run fails, and Sam retries it from the failed step on the run page). All three runs complete.
 * Then Sam pauses the automation (a delivery gets 503 with Retry-After; after Resume the provider's retry is accepted)
 * and stops all its waiting runs. Screenshots of every screen: e2e/artifacts/maya-*.png.
 */
const signingSecret = "slack-signing-secret-for-maya";
const inboundDomain = "reply.acme.test";
let d: TestDeployment;
let smtp: StoryStandIns["smtp"];
let model: StoryStandIns["model"];
let crm: StoryStandIns["crm"];
let slack: StoryStandIns["slack"];
let page: Page;
let automationId = "";
let webhookSecret = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shots = screenshots("maya");
const shot = (name: string, p: Page = page) => shots(p, name);

/** The automation as the marketer built it in the editor (e2e/builder-forms.test.ts builds the same with forms). */
const mayaGraph = () =>
  storyGraph({
    prompt: "Write a short, friendly follow-up to {{input.name}} ({{contact.email}}) about {{input.question}}",
    subject: "About your question, {{input.name}}",
    text: "{{steps.draft.output.text}}",
    crmAttempts: 1,
  });

beforeAll(async () => {
  d = await startTestDeployment();
  const published = await publish(d.t.db, mayaGraph(), { automation: "maya-follow-up", triggerAuth: "signed" });
  automationId = published.automationId;
  webhookSecret = (await triggerSettings(d.t.db, published.orgId, automationId, "signed")).signingSecret;
  ({ smtp, model, crm, slack } = await connectedStoryStandIns(d, published.orgId));
  await upsertMember(d.t.db, { orgId: published.orgId, email: "sam@acme.test", name: "Sam", password: testPassword, role: "owner", slackUserId: "U0SAM" });
  const web = await d.startWeb({ SLACK_SIGNING_SECRET: signingSecret });
  await d.startApps(
    [mailInSpec, ...productProcesses({ io: { INBOUND_EMAIL_DOMAIN: inboundDomain }, slow: {}, human: { HOLDFAST_PUBLIC_URL: web.base } })],
    90_000,
  );
  // Sam works from New York; the run pages show his time with each contact's beside it.
  page = await signedInPage(await d.launchBrowser(), web.base, "sam@acme.test", { viewport: { width: 1400, height: 1000 }, timezoneId: "America/New_York" });
  page.on("pageerror", (e) => console.log("pageerror:", e.message));
});

afterAll(async () => d?.stop());

const leads = {
  lena: { email: "lena@example.com", name: "Lena", zone: "America/New_York", question: "the annual plan" },
  kim: { email: "kim@example.com", name: "Kim", zone: "Asia/Tokyo", question: "team seats" },
  jonas: { email: "jonas@example.com", name: "Jonas", zone: "Europe/Berlin", question: "a discount" },
} as const;
type Lead = keyof typeof leads;
const runs = {} as Record<Lead, string>;

/** The form tool's signed POST (Standard Webhooks: id, timestamp, HMAC over both and the body). */
function deliver(id: string, body: Record<string, unknown>) {
  const raw = JSON.stringify(body);
  const at = Math.floor(Date.now() / 1000);
  return fetch(`${d.web.base}/api/hooks/acme/maya-follow-up`, {
    method: "POST",
    headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signPayload(webhookSecret, id, at, raw) },
    body: raw,
  });
}

const stepOf = async (runId: string, nodeId: string) => (await q("SELECT id, status, output FROM steps WHERE run_id = $1 AND node_id = $2 ORDER BY created_at DESC LIMIT 1", [runId, nodeId]))[0];
const statusOf = async (runId: string) => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status as string | undefined;
/** Waits for a run's status; on a timeout the error carries the run's steps and timeline, to say where it stopped. */
const runReaches = (runId: string, status: string, what: string) =>
  waitFor(async () => (await statusOf(runId)) === status, 60_000, what).catch(async (error: Error) => {
    const steps = await q("SELECT node_id, status, attempt, output, error FROM steps WHERE run_id = $1 ORDER BY created_at", [runId]);
    const events = await q("SELECT type, node_id, data FROM run_events WHERE run_id = $1 ORDER BY id", [runId]);
    throw new Error(`${error.message}\nsteps: ${JSON.stringify(steps)}\nevents: ${JSON.stringify(events)}`);
  });

/** 09:00 on the first weekday after `anchor` in `zone` (luxon, independent of the product's own rule code). */
function nextWeekdayNine(anchor: Date, zone: string): Date {
  const from = DateTime.fromJSDate(anchor, { zone });
  for (let i = 0; i <= 8; i++) {
    const at = from.plus({ days: i }).set({ hour: 9, minute: 0, second: 0, millisecond: 0 });
    if (at.weekday <= 5 && at.toMillis() > anchor.getTime()) return at.toJSDate();
  }
  throw new Error("unreachable");
}

/** The run page's summary as Sam reads it: status sentence, what to do, and the story's sentences. Screenshot taken. */
async function readRun(runId: string, name: string) {
  await page.goto(`${d.web.base}/runs/${runId}`);
  await expect.poll(async () => (await page.locator(".zone-note").textContent()) ?? "", { timeout: 15_000 }).toContain("America/New_York");
  await shot(`run-${name}`);
  const sentences = (await page.locator("ol.story li").allTextContents()).map((x) => x.replace(/^\S+\s+/, "").trim());
  const status = ((await page.locator("[data-status-sentence]").textContent()) ?? "").trim();
  console.log(`run page ${name}: ${status}\n  ${sentences.join("\n  ")}`);
  return { status, sentences };
}

const settingsSection = (heading: string) => page.locator("section", { has: page.locator("h2", { hasText: heading }) });

describe("Maya's story, whole", () => {
  it("three leads: stored zones, a signed webhook, 09:00 next weekday, drafts, Slack and inbox approvals, an unsubscribe, Reply-To, replies, the CRM, a retry", async () => {
    // 1. Sam stores each lead's time zone in Settings -> Contacts.
    await page.goto(`${d.web.base}/settings`);
    const contacts = settingsSection("Contacts");
    for (const lead of Object.values(leads)) {
      await contacts.locator('input[name="email"]').fill(lead.email);
      await contacts.locator('input[name="tz"]').fill(lead.zone);
      await contacts.locator('select[name="consent"]').selectOption("granted");
      await contacts.getByRole("button", { name: "Save contact" }).click();
      // On a timeout, say what the section read (an error note names the cause) and where the page was.
      await contacts
        .locator("tr", { hasText: lead.email })
        .waitFor()
        .catch(async (e: Error) => {
          throw new Error(`${e.message}\nat ${page.url()} the Contacts section read: ${await contacts.textContent()} (email field: "${await contacts.locator('input[name="email"]').inputValue()}")`);
        });
      // The form clears itself once the save is through: type the next lead only then (a loaded machine showed the
      // row first, then cleared what was already typed for the next one).
      await expect.poll(() => contacts.locator('input[name="email"]').inputValue(), { timeout: 30_000 }).toBe("");
    }
    await shot("1-settings-contacts");

    // 2. The form tool posts each lead, signed, with no time zone in the payload.
    for (const [key, lead] of Object.entries(leads) as [Lead, (typeof leads)[Lead]][]) {
      const res = await deliver(`sub_${key}`, { id: `sub_${key}`, email: lead.email, name: lead.name, question: lead.question });
      expect(res.status).toBe(202);
      runs[key] = ((await res.json()) as { runId: string }).runId;
    }
    // A tampered delivery is refused and starts nothing.
    const forged = await fetch(`${d.web.base}/api/hooks/acme/maya-follow-up`, {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": "sub_x", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": signPayload(webhookSecret, "sub_x", Math.floor(Date.now() / 1000), "{}") },
      body: JSON.stringify({ id: "sub_x", email: "mallory@evil.test" }),
    });
    expect(forged.status).toBe(401);

    // 3. Each run waits until 09:00 on the next weekday in the contact's stored zone.
    for (const key of Object.keys(leads) as Lead[]) {
      const [timer] = await waitFor(async () => {
        const r = await q("SELECT zone, zone_source, anchor_at, due_at FROM timers t JOIN steps s ON s.id = t.step_id WHERE t.run_id = $1 AND s.node_id = 'wait'", [runs[key]]);
        return r.length ? r : undefined;
      }, 30_000, `${key}'s wait`);
      expect({ key, zone: timer.zone, source: timer.zone_source }).toEqual({ key, zone: leads[key].zone, source: "contact" });
      expect((timer.due_at as Date).toISOString()).toBe(nextWeekdayNine(timer.anchor_at as Date, leads[key].zone).toISOString());
    }
    const waiting = await readRun(runs.lena, "1-lena-waiting");
    expect(waiting.status).toMatch(/^Waiting until (Mon|Tue|Wed|Thu|Fri) \d+ \w{3} 09:00 America\/New_York/);
    await page.goto(`${d.web.base}/?status=waiting`);
    for (const key of Object.keys(leads) as Lead[]) await page.locator(`tr[data-run="${runs[key]}"]`).waitFor();
    await shot("2-runs-waiting");

    // 4. Jonas unsubscribes while he waits: Sam records it on the suppression list.
    await page.goto(`${d.web.base}/settings`);
    const suppressions = settingsSection("Suppression list");
    await suppressions.locator('input[name="email"]').fill(leads.jonas.email);
    await suppressions.locator('input[name="reason"]').fill("unsubscribed (asked by phone)");
    await suppressions.getByRole("button", { name: "Suppress" }).click();
    await suppressions.locator("tr", { hasText: leads.jonas.email }).waitFor();
    await shot("3-settings-suppressed");

    // 5. Time moves: the waits' due instants become the database's now(); the sweeper fires them.
    await q("UPDATE timers SET due_at = now() WHERE run_id = ANY($1::text[]) AND fired_at IS NULL", [Object.values(runs)]);

    // 6. The model drafts; each approval is posted to Slack and listed in the inbox.
    const approvals = {} as Record<Lead, { id: string; digest: string; stepId: string }>;
    for (const key of Object.keys(leads) as Lead[]) {
      const [a] = await waitFor(async () => {
        const r = await q("SELECT id, digest, step_id, content FROM approvals WHERE run_id = $1", [runs[key]]);
        return r.length ? r : undefined;
      }, 60_000, `${key}'s approval`);
      expect(a.content).toContain(`Draft: Write a short, friendly follow-up to ${leads[key].name} (${leads[key].email}) about ${leads[key].question}`);
      approvals[key] = { id: a.id, digest: a.digest, stepId: a.step_id };
    }
    expect(model.calls).toBe(3);

    // Lena: Sam clicks Approve in Slack (a signed interaction on the web app's Slack endpoint).
    const message = await waitFor(async () => slack.messages.find((m) => m.metadata?.event_payload.approval_id === approvals.lena.id), 30_000, "Lena's Slack post");
    expect(JSON.stringify(message.blocks)).toContain("Send this follow-up to lena@example.com?");
    const actions = message.blocks.find((b) => (b as { type: string }).type === "actions") as { elements: { action_id: string; value: string }[] };
    const approve = actions.elements.find((e) => e.action_id === approveActionId)?.value as string;
    const click = slackInteraction(signingSecret, { teamId: slack.teamId, userId: "U0SAM", channel: message.channel, ts: message.ts, actionId: approveActionId, value: approve });
    const clicked = await fetch(`${d.web.base}/api/slack/interactions`, { method: "POST", headers: click.headers, body: click.body });
    expect(clicked.status).toBe(200);
    expect(await clicked.json()).toMatchObject({ ok: true, message: "approved by Sam" });
    await waitFor(async () => slack.updates.some((u) => u.ts === message.ts && u.text.includes("Approved by Sam")), 20_000, "the Slack message to show the decision");

    // Kim and Jonas: Sam approves in the web inbox, reading the exact draft.
    await page.goto(`${d.web.base}/approvals`);
    for (const key of ["kim", "jonas"] as const) {
      const card = page.locator(`li[data-approval="${approvals[key].id}"]`);
      await card.waitFor();
      expect(await card.locator("pre.content").textContent()).toContain(`follow-up to ${leads[key].name}`);
    }
    expect(await page.locator(`li[data-approval="${approvals.lena.id}"]`).count()).toBe(0); // decided in Slack
    await shot("4-inbox");
    for (const key of ["kim", "jonas"] as const) {
      await page.locator(`li[data-approval="${approvals[key].id}"]`).locator('button[value="approved"]').click();
      await page.waitForSelector(`table.decided tr[data-approval="${approvals[key].id}"]`);
    }
    await shot("5-inbox-decided");

    // 7. The emails: Lena and Kim get theirs with a routing Reply-To; Jonas's is skipped, and his run says why.
    const mails = {} as Record<"lena" | "kim", { replyTo: string; subject: string }>;
    for (const key of ["lena", "kim"] as const) {
      const mail = await waitFor(async () => smtp.received.find((m) => m.to.includes(leads[key].email)), 60_000, `${key}'s email`);
      expect(mail.subject).toBe(`About your question, ${leads[key].name}`);
      expect(mail.replyTo).toMatch(new RegExp(`^reply\\+[a-z2-7]+@${inboundDomain.replace(/\./g, "\\.")}$`));
      expect(mail.raw).toContain(`follow-up to ${leads[key].name}`);
      mails[key] = { replyTo: mail.replyTo as string, subject: mail.subject as string };
      await waitFor(async () => (await stepOf(runs[key], "reply"))?.status === "waiting", 30_000, `${key}'s reply wait`);
    }
    await runReaches(runs.jonas, "completed", "Jonas's run to complete without an email");
    expect(smtp.received.some((m) => m.to.includes(leads.jonas.email))).toBe(false);
    expect((await stepOf(runs.jonas, "send")).output).toMatchObject({ skipped: true, reason: "suppressed: unsubscribed (asked by phone)" });
    expect((await stepOf(runs.jonas, "reply")).output).toMatchObject({ outcome: "timeout" });

    // 8. Lena replies through the SMTP receiver, to the Reply-To alone: her run updates the CRM and completes.
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: mailInPort(d.app("mail-in")), secure: false, ignoreTLS: true });
    try {
      await transport.sendMail({ from: "Lena <lena@example.com>", to: mails.lena.replyTo, subject: `Re: ${mails.lena.subject}`, text: "Yes, let's talk on Thursday.", messageId: "<lena-reply@mail.example.com>" });
      await runReaches(runs.lena, "completed", "Lena's run to complete");
      // The CRM refuses Kim's update once (a validation error no retry would change): her run fails at the CRM step.
      crm.behave({ failFirst: 1, failStatus: 422 });
      await transport.sendMail({ from: "Kim <kim@example.com>", to: mails.kim.replyTo, subject: `Re: ${mails.kim.subject}`, text: "Five seats, please.", messageId: "<kim-reply@mail.example.com>" });
    } finally {
      transport.close();
    }
    await runReaches(runs.kim, "failed", "Kim's run to fail at the CRM");

    // 9. Sam retries Kim's run from its failed step on the run page: the same record, the run completes.
    const failed = await readRun(runs.kim, "2-kim-failed");
    expect(failed.status).toMatch(/^Failed at "Update the CRM" on attempt 1 of 1: the service answered 422 \(unprocessable\)/);
    await page.getByRole("button", { name: "Retry from the failed step" }).click();
    await page.waitForSelector("text=Retrying from step crm");
    await runReaches(runs.kim, "completed", "Kim's retried run to complete");

    // Everything the story promised: one email each to Lena and Kim, the CRM updated for all three.
    expect(smtp.received.filter((m) => m.to.includes(leads.lena.email))).toHaveLength(1);
    expect(smtp.received.filter((m) => m.to.includes(leads.kim.email))).toHaveLength(1);
    const outcomes = Object.fromEntries([...crm.records.values()].map((r) => [r.fields.email, r.fields.last_outcome]));
    expect(outcomes).toEqual({ "lena@example.com": "reply", "kim@example.com": "reply", "jonas@example.com": "timeout" });

    // 10. Each run page, read as Sam reads it.
    const lena = await readRun(runs.lena, "3-lena-completed");
    expect(lena.status).toMatch(/^Completed /);
    expect(lena.sentences).toEqual([
      // Fired early by the test, so the instant is the test's own: any day of the week.
      expect.stringMatching(/^Waited until (Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d+ \w{3} \d\d:\d\d America\/New_York/),
      expect.stringMatching(/^Draft by gpt-4o-mini, \d+ tokens, \$0\.\d+/),
      expect.stringMatching(/^Approved by Sam in Slack at /),
      expect.stringMatching(/^Email to lena@example\.com "About your question, Lena" accepted by the server at /),
      expect.stringMatching(/^Reply received from lena@example\.com at .*"Re: About your question, Lena"/),
      expect.stringMatching(/contact/),
    ]);
    expect(await page.locator("[data-email-subject]").textContent()).toBe("About your question, Lena");
    expect(await page.locator("pre.email-body").textContent()).toContain("follow-up to Lena");
    const kim = await readRun(runs.kim, "4-kim-completed");
    expect(kim.status).toMatch(/^Completed /);
    expect(kim.sentences.some((s) => /^Approved by Sam in the inbox at /.test(s))).toBe(true);
    // The failure and the retry are told in order, before the step's final sentence.
    expect(kim.sentences.slice(-2)).toEqual([
      expect.stringMatching(/^"Update the CRM" answered 422 \(unprocessable\)[^;]* and the run failed; retried from that step by sam@acme\.test at /),
      expect.stringMatching(/^CRM contact .* created or updated/),
    ]);
    const jonas = await readRun(runs.jonas, "5-jonas-completed");
    expect(jonas.sentences).toContain("Email to jonas@example.com not sent: suppressed: unsubscribed (asked by phone)");
    expect(jonas.sentences.some((s) => s.startsWith("Took the timeout path at once: no email was sent (suppressed: unsubscribed (asked by phone))"))).toBe(true);
    await page.goto(`${d.web.base}/?automation=maya-follow-up`);
    await shot("6-runs-list");
  });

  it("pause: a delivery gets 503 with Retry-After, resume: the provider's retry is accepted; Stop all runs cancels the waiting ones", async () => {
    await page.goto(`${d.web.base}/automations?org=acme`);
    const row = page.locator('tr[data-automation="maya-follow-up"]');
    await row.getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => row.locator("[data-lifecycle]").textContent()).toBe("Paused");
    await shot("7-list-paused");
    const lead = { id: "sub_omar", email: "omar@example.com", name: "Omar", question: "invoices" };
    const refused = await deliver(lead.id, lead);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await q("SELECT count(*)::int AS n FROM runs WHERE input->>'id' = $1", [lead.id])).toEqual([{ n: 0 }]);
    await row.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => row.locator("[data-lifecycle]").textContent()).toBe("Active");
    const accepted = await deliver(lead.id, lead); // the provider sends it again
    expect(accepted.status).toBe(202);
    const omar = ((await accepted.json()) as { runId: string }).runId;
    const priya = ((await (await deliver("sub_priya", { id: "sub_priya", email: "priya@example.com", name: "Priya", question: "security" })).json()) as { runId: string }).runId;
    for (const runId of [omar, priya]) await waitFor(async () => (await stepOf(runId, "wait"))?.status === "waiting", 30_000, "the new run's wait");

    await page.goto(`${d.web.base}/automations/${automationId}?org=acme`);
    await page.locator(".react-flow__node").first().waitFor();
    await shot("8-editor");
    await page.getByRole("button", { name: "Stop all runs…" }).click();
    await expect.poll(() => page.locator("[data-stop-count]").textContent()).toBe("2 runs are running and would be cancelled.");
    await page.getByLabel("Reason (kept on each run's timeline)").fill("campaign ended");
    await shot("9-stop-count");
    await page.getByRole("button", { name: "Stop 2 runs" }).click();
    await page.waitForSelector("text=Stopped: 2 cancelled.");
    for (const runId of [omar, priya]) expect(await q("SELECT status, cancel_reason FROM runs WHERE id = $1", [runId])).toEqual([{ status: "cancelled", cancel_reason: "campaign ended" }]);
    // The three finished runs were not touched.
    expect((await q("SELECT status FROM runs WHERE id = ANY($1::text[])", [Object.values(runs)])).map((r) => r.status)).toEqual(["completed", "completed", "completed"]);
    const stopped = await readRun(omar, "6-omar-cancelled");
    expect(stopped.status).toMatch(/^Cancelled/);
  });
});
