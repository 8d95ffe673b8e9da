import { createConnection } from "@holdfast/core/providers";
import { editActionId, approveActionId } from "@holdfast/core/people";
import { parseGraph } from "@holdfast/core/versions";
import {
  addMember,
  emailBody,
  productProcesses,
  publish,
  type ReceivedEmail,
  type SlackApi,
  type SmtpTarget,
  screenshots,
  signInPage,
  slackInteraction,
  slackViewSubmission,
  startSlackApi,
  startSmtpTarget,
  startTestDeployment,
  startTestRun,
  type TestDeployment,
  testPassword,
  waitFor,
} from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Edit before approving, through the product's real edges: Sam edits the draft of an approved email in the inbox
 * (Chromium) and approves; in Slack, the Edit button's block_actions makes the web open a modal (views.open on the
 * Slack stand-in) and the modal's signed view_submission saves the edit and approves. Either way the SMTP sink
 * receives exactly the edited subject and text. Every process is real, on this file's own database and Redis prefix.
 */
const signingSecret = "slack-signing-secret-for-edit-tests";
let d: TestDeployment;
let slack: SlackApi;
let smtp: SmtpTarget;
let orgId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

function emailApproval(slackChannel?: string) {
  return parseGraph({
    nodes: [
      { id: "t", kind: "trigger", config: { eventIdField: "id" } },
      {
        id: "review",
        kind: "approval",
        config: {
          approvers: { users: ["sam@acme.test", "alex@acme.test"] },
          title: "Send the follow-up to {{input.email}}?",
          email: "send",
          deadlineSeconds: 3600,
          ...(slackChannel ? { slack: { connection: "slack", channel: slackChannel } } : {}),
        },
      },
      { id: "send", kind: "send_email", config: { connection: "mail", to: "{{input.email}}", subject: "About {{input.topic}}", text: "{{input.draft}}" } },
      { id: "done", kind: "end" },
      { id: "dropped", kind: "end" },
    ],
    edges: [
      { from: "t", to: "review" },
      { from: "review", to: "send", label: "approved" },
      { from: "review", to: "dropped", label: "rejected" },
      { from: "send", to: "done" },
    ],
  });
}

beforeAll(async () => {
  d = await startTestDeployment();
  slack = d.closeAtStop(await startSlackApi());
  smtp = d.closeAtStop(await startSmtpTarget());
  orgId = (await publish(d.t.db, emailApproval(), { automation: "inbox-edit" })).orgId;
  await publish(d.t.db, emailApproval("C0APPROVALS"), { automation: "slack-edit" });
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "Acme <hello@acme.test>" }, secret: null });
  await createConnection(d.t.db, { orgId, kind: "slack", name: "slack", config: { teamId: slack.teamId, apiUrl: slack.apiUrl }, secret: slack.token });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "approver", { slackUserId: "U0SAM" });
  await addMember(d.t.db, orgId, "alex@acme.test", "Alex", "approver", { slackUserId: "U0ALEX" });
  const web = await d.startWeb({ SLACK_SIGNING_SECRET: signingSecret });
  await d.startApps(productProcesses({ human: { HOLDFAST_PUBLIC_URL: web.base }, io: {} }));
});

afterAll(async () => d?.stop());

let seq = 0;
async function startApproval(automation: string) {
  const runId = await startTestRun(d.t.db, automation, { id: `evt_${++seq}`, email: "maya@example.com", topic: "pricing", draft: "Hi Maya, here are the prices." });
  const [a] = await waitFor(async () => {
    const r = await q("SELECT id, digest FROM approvals WHERE run_id = $1", [runId]);
    return r.length ? r : undefined;
  }, 15_000, "the approval");
  return { runId, approvalId: a.id as string, digest: a.digest as string };
}

/** The email the run sent, once its run completed. */
async function sentBy(runId: string): Promise<ReceivedEmail[]> {
  await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 20_000, "the run to complete");
  return smtp.received.filter((m) => m.effectKey === `${runId}/send/1`);
}

const edited = { subject: "Our prices, as promised", text: "Hi Maya,\n\nhere are this month's prices, as promised on Tuesday.\n\nSam" };

describe("edit before approving in the inbox (Chromium)", () => {
  let browser: Browser;
  const shot = screenshots("approvals-edit");
  beforeAll(async () => {
    browser = await d.launchBrowser();
  });

  it("Sam edits the draft and approves; the SMTP sink receives exactly the edited text; a second submit reads back; the run page shows the original and the edit", async () => {
    const a = await startApproval("inbox-edit");
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInPage(page, d.web.base, "sam@acme.test", testPassword);
    const card = page.locator(`li[data-approval="${a.approvalId}"]`);
    await card.locator("details.edit-draft > summary").click();
    const form = card.locator("details.edit-draft form");
    expect(await form.locator('input[name="subject"]').inputValue()).toBe("About pricing");
    expect(await form.locator('textarea[name="text"]').inputValue()).toBe("Hi Maya, here are the prices.");
    await form.locator('input[name="subject"]').fill(edited.subject);
    await form.locator('textarea[name="text"]').fill(edited.text);
    await shot(card, "form");
    await shot(page, "inbox");
    // The same page in a second tab (a double submit, the back button): its form carries the digest it was shown.
    const second = await context.newPage();
    await second.goto(`${d.web.base}/approvals`);
    const secondForm = second.locator(`li[data-approval="${a.approvalId}"] details.edit-draft form`);
    await second.locator(`li[data-approval="${a.approvalId}"] details.edit-draft > summary`).click();
    await secondForm.locator('textarea[name="text"]').fill("A second, different edit");
    await form.locator('button[value="approve"]').click();
    await page.waitForSelector("text=Saved your edit and approved: the email goes out exactly as you edited it.");
    await shot(page, "approved");

    const sent = await sentBy(a.runId);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: ["maya@example.com"], subject: edited.subject });
    expect(emailBody(sent[0] as ReceivedEmail)).toEqual({ text: edited.text, html: null });

    // The second tab's Save and approve: read back, nothing more edited, approved once, sent once.
    await secondForm.locator('button[value="approve"]').click();
    await second.waitForSelector("text=Already recorded: you approved this at");
    await shot(second, "repeated");
    await second.close();
    expect(await q("SELECT count(*)::int AS n FROM approval_edits WHERE approval_id = $1", [a.approvalId])).toEqual([{ n: 1 }]);
    expect(await q("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'approval.decided'", [a.runId])).toEqual([{ n: 1 }]);
    expect(smtp.received.filter((x) => x.effectKey === `${a.runId}/send/1`)).toHaveLength(1);

    await page.goto(`${d.web.base}/runs/${a.runId}`);
    const card2 = page.locator('section[aria-label="the email it sent"]');
    await card2.locator("details[data-email-edited] > summary").click();
    expect(await card2.locator("[data-original-draft]").textContent()).toBe("Subject: About pricing\n\nHi Maya, here are the prices.");
    expect(await card2.locator("[data-edited-draft]").textContent()).toBe(`Subject: ${edited.subject}\n\n${edited.text}`);
    expect(await card2.locator(".draft-edit").textContent()).toMatch(/Edited by Sam in the approvals inbox, .*: changed the subject and the text\./);
    await shot(page, "run-page");
    await context.close();
  });
  it("Alex's Approve on a page shown before Sam's edit reads back who edited it and when; the reloaded page shows the edited draft, which Alex approves", async () => {
    const a = await startApproval("inbox-edit");
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInPage(page, d.web.base, "alex@acme.test", testPassword);
    const card = page.locator(`li[data-approval="${a.approvalId}"]`);
    expect(await card.locator("pre.content").textContent()).toContain("Hi Maya, here are the prices.");
    // The sign-in's navigation has settled: nothing renders the card again (with the edited draft) before the click.
    await page.waitForLoadState("networkidle");
    const [sam] = await q("SELECT id FROM users WHERE email = 'sam@acme.test'");
    const { editApproval } = await import("@holdfast/core/people");
    expect(await editApproval(d.t.db, { orgId, approvalId: a.approvalId, digest: a.digest, ...edited, via: "slack", actor: { userId: sam.id }, approve: false })).toMatchObject({ ok: true });
    expect(await card.locator('form.decide input[name="digest"]').inputValue()).toBe(a.digest);
    await card.locator('form.decide button[value="approved"]').click();
    await page.waitForSelector("text=/Not recorded: Sam edited the draft at \\d\\d:\\d\\d UTC on .* after this was shown to you; read the new version before deciding\\./");
    const fresh = page.locator(`li[data-approval="${a.approvalId}"]`);
    expect(await fresh.locator("[data-last-edit]").textContent()).toMatch(/^Sam edited this draft in Slack .*: below is the edited version\.$/);
    expect(await fresh.locator("pre.content").textContent()).toContain("as promised on Tuesday");
    await shot(page, "stale");
    await fresh.locator('form.decide button[value="approved"]').click();
    await page.waitForSelector("text=Approved: the run goes on.");
    const sent = await sentBy(a.runId);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.subject).toBe(edited.subject);
    expect(emailBody(sent[0] as ReceivedEmail)).toEqual({ text: edited.text, html: null });
    await context.close();
  });
});

describe("edit before approving in a Slack modal", () => {
  const click = (req: { body: string; headers: Record<string, string> }) =>
    fetch(`${d.web.base}/api/slack/interactions`, { method: "POST", headers: req.headers, body: req.body });
  const dbNow = async () => Math.floor(((await q("SELECT EXTRACT(EPOCH FROM now())::float8 AS db"))[0] as { db: number }).db);

  it("Edit opens the modal (views.open with the interaction's trigger); its signed submission saves and approves; the sink receives exactly the edited text", async () => {
    const a = await startApproval("slack-edit");
    const m = await waitFor(async () => slack.messages.find((x) => x.metadata?.event_payload.approval_id === a.approvalId), 15_000, "the Slack post");
    await waitFor(async () => (await q("SELECT 1 FROM approvals WHERE id = $1 AND slack_message IS NOT NULL", [a.approvalId])).length > 0, 15_000, "the post stored");
    const actions = m.blocks.find((b) => (b as { type: string }).type === "actions") as { elements: { action_id: string; value: string }[] };
    const editToken = actions.elements.find((e) => e.action_id === editActionId)?.value as string;
    const approveToken = actions.elements.find((e) => e.action_id === approveActionId)?.value as string;
    expect(editToken).toBeTruthy();

    const opened = await click(slackInteraction(signingSecret, { teamId: slack.teamId, userId: "U0SAM", channel: m.channel, ts: m.ts, actionId: editActionId, value: editToken }, await dbNow()));
    expect({ status: opened.status, body: await opened.json() }).toEqual({ status: 200, body: { ok: true, message: "edit form opened" } });
    expect(slack.views).toHaveLength(1);
    const view = slack.views[0]?.view as unknown as { private_metadata: string; blocks: { block_id?: string; element?: { initial_value?: string } }[] };
    expect(view.blocks.find((b) => b.block_id === "subject")?.element?.initial_value).toBe("About pricing");
    expect(view.blocks.find((b) => b.block_id === "body")?.element?.initial_value).toBe("Hi Maya, here are the prices.");

    // A forged submission (wrong secret) is refused before anything is read.
    const forged = await click(slackViewSubmission("not the secret", { teamId: slack.teamId, userId: "U0SAM", privateMetadata: view.private_metadata, ...edited }, await dbNow()));
    expect(forged.status).toBe(401);

    const res = await click(slackViewSubmission(signingSecret, { teamId: slack.teamId, userId: "U0SAM", privateMetadata: view.private_metadata, ...edited }, await dbNow()));
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { response_action: "clear" } });
    const sent = await sentBy(a.runId);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: ["maya@example.com"], subject: edited.subject });
    expect(emailBody(sent[0] as ReceivedEmail)).toEqual({ text: edited.text, html: null });
    expect(await q("SELECT via, edited_by_name FROM approval_edits WHERE approval_id = $1", [a.approvalId])).toEqual([{ via: "slack", edited_by_name: "Sam" }]);

    // Alex's Approve, pressed on the message as it was before the edit: read back, nothing recorded.
    const stale = await click(slackInteraction(signingSecret, { teamId: slack.teamId, userId: "U0ALEX", channel: m.channel, ts: m.ts, actionId: approveActionId, value: approveToken }, await dbNow()));
    expect(await stale.json()).toMatchObject({ ok: false, error: "already_decided", message: expect.stringMatching(/^approved by Sam \(slack\) at /) });
    // The message shows the edited email and the outcome.
    await waitFor(async () => slack.updates.some((u) => u.ts === m.ts && JSON.stringify(u.blocks).includes("as promised on Tuesday") && u.text.includes("Approved by Sam")), 15_000, "the Slack update");
  });

  it("an edit saved without approving updates the Slack message (new buttons); the old Approve reads back who edited the draft and when", async () => {
    const a = await startApproval("slack-edit");
    const m = await waitFor(async () => slack.messages.find((x) => x.metadata?.event_payload.approval_id === a.approvalId), 15_000, "the Slack post");
    await waitFor(async () => (await q("SELECT 1 FROM approvals WHERE id = $1 AND slack_message IS NOT NULL", [a.approvalId])).length > 0, 15_000, "the post stored");
    const buttons = (blocks: unknown[]) => (blocks.find((b) => (b as { type: string }).type === "actions") as { elements: { action_id: string; value: string }[] }).elements;
    const oldApprove = buttons(m.blocks).find((e) => e.action_id === approveActionId)?.value as string;
    const { editApproval } = await import("@holdfast/core/people");
    const [sam] = await q("SELECT id FROM users WHERE email = 'sam@acme.test'");
    expect(await editApproval(d.t.db, { orgId, approvalId: a.approvalId, digest: a.digest, ...edited, via: "inbox", actor: { userId: sam.id }, approve: false })).toMatchObject({ ok: true, status: "pending" });
    const update = await waitFor(async () => slack.updates.find((u) => u.ts === m.ts && JSON.stringify(u.blocks).includes("as promised on Tuesday")), 15_000, "the Slack update");
    const newApprove = buttons(update.blocks).find((e) => e.action_id === approveActionId)?.value as string;
    expect(newApprove).not.toBe(oldApprove);

    const stale = await click(slackInteraction(signingSecret, { teamId: slack.teamId, userId: "U0ALEX", channel: m.channel, ts: m.ts, actionId: approveActionId, value: oldApprove, responseUrl: `${slack.origin}/response/edit` }, await dbNow()));
    const body = (await stale.json()) as { ok: boolean; message: string };
    expect(body).toMatchObject({ ok: false, message: expect.stringMatching(/^Sam edited the draft at \d\d:\d\d UTC on \d{4}-\d\d-\d\d after this was shown to you; read the new version before deciding$/) });
    await waitFor(async () => slack.ephemerals.some((e) => e.path === "/response/edit"), 10_000, "the ephemeral note");
    expect((slack.ephemerals.find((e) => e.path === "/response/edit")?.body as { text: string } | undefined)?.text).toMatch(/^Not recorded: Sam edited the draft at /);

    const fresh = await click(slackInteraction(signingSecret, { teamId: slack.teamId, userId: "U0ALEX", channel: m.channel, ts: m.ts, actionId: approveActionId, value: newApprove }, await dbNow()));
    expect(await fresh.json()).toMatchObject({ ok: true, message: "approved by Alex" });
    const sent = await sentBy(a.runId);
    expect(emailBody(sent[0] as ReceivedEmail)).toEqual({ text: edited.text, html: null });
  });
});
