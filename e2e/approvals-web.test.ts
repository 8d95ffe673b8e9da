import { createConnection } from "@holdfast/core/providers";
import { approveActionId, decideApproval, issueButtonToken, rejectActionId } from "@holdfast/core/people";
import {
  addMember,
  approvalGraph,
  productProcesses,
  publish,
  type SlackApi,
  screenshots,
  slackInteraction,
  startSlackApi,
  startTestDeployment,
  startTestRun,
  type TestDeployment,
  waitFor,
} from "@holdfast/testkit";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Approvals through the product's real edges: the built Next server's Slack interactivity endpoint (signature,
 * timestamp window, button tokens), the human lane posting and updating messages on a local Slack Web API, and the
 * approvals inbox in Chromium. Every process is real, on this file's own database and Redis prefix.
 */
const signingSecret = "slack-signing-secret-for-tests";
let d: TestDeployment;
let slack: SlackApi;
let orgId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  slack = d.closeAtStop(await startSlackApi());
  orgId = (
    await publish(
      d.t.db,
      approvalGraph({ approvers: { role: "approver" }, slack: { connection: "slack", channel: "C0APPROVALS" } }),
      { automation: "slack" },
    )
  ).orgId;
  await publish(d.t.db, approvalGraph({ approvers: { users: ["sam@acme.test"] } }), { automation: "inbox" });
  await createConnection(d.t.db, { orgId, kind: "slack", name: "slack", config: { teamId: slack.teamId, apiUrl: slack.apiUrl }, secret: slack.token });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "approver", { slackUserId: "U0SAM" });
  await addMember(d.t.db, orgId, "alex@acme.test", "Alex", "approver", { slackUserId: "U0ALEX" });
  const web = await d.startWeb({ SLACK_SIGNING_SECRET: signingSecret });
  await d.startApps(productProcesses({ human: { HOLDFAST_PUBLIC_URL: web.base } }));
});

afterAll(async () => d?.stop());

let seq = 0;
async function startApproval(automation: string, draft = "Hi Maya, shall we meet on Thursday?") {
  const runId = await startTestRun(d.t.db, automation, { id: `evt_${++seq}`, email: "maya@example.com", draft });
  const [a] = await waitFor(async () => {
    const r = await q("SELECT id, digest, step_id FROM approvals WHERE run_id = $1", [runId]);
    return r.length ? r : undefined;
  }, 15_000, "the approval");
  return { runId, approvalId: a.id as string, digest: a.digest as string, stepId: a.step_id as string };
}

/** The approval's Slack message (posted by the human lane) and its buttons' tokens. */
async function posted(approvalId: string) {
  const m = await waitFor(async () => slack.messages.find((x) => x.metadata?.event_payload.approval_id === approvalId), 15_000, "the Slack post");
  await waitFor(async () => (await q("SELECT 1 FROM approvals WHERE id = $1 AND slack_message IS NOT NULL", [approvalId])).length > 0, 15_000, "the post stored");
  const actions = m.blocks.find((b) => (b as { type: string }).type === "actions") as { elements: { action_id: string; value: string }[] };
  const value = (id: string) => actions.elements.find((e) => e.action_id === id)?.value as string;
  return { message: m, approve: value(approveActionId), reject: value(rejectActionId) };
}

const click = (req: { body: string; headers: Record<string, string> }) =>
  fetch(`${d.web.base}/api/slack/interactions`, { method: "POST", headers: req.headers, body: req.body });

/** Everything a refused request must leave unchanged. */
const snapshot = async (approvalId: string, runId: string) => ({
  approval: await q("SELECT status, decided_at, updated_at FROM approvals WHERE id = $1", [approvalId]),
  events: await q("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1", [runId]),
  signals: await q("SELECT count(*)::int AS n FROM signals"),
});

describe("Slack", () => {
  it("posts the request with its content and buttons; refuses every bad request with no state change; a signed click decides and the message shows it", async () => {
    const a = await startApproval("slack");
    const { message, approve } = await posted(a.approvalId);
    expect(message.channel).toBe("C0APPROVALS");
    expect(JSON.stringify(message.blocks)).toContain("Hi Maya, shall we meet on Thursday?");
    const other = await startApproval("slack", "A different draft");
    const otherButtons = await posted(other.approvalId);

    const base = { teamId: slack.teamId, userId: "U0SAM", channel: message.channel, ts: message.ts, actionId: approveActionId, value: approve };
    const before = await snapshot(a.approvalId, a.runId);
    // The window is judged by the database clock: each request's timestamp is set against it just before it is
    // sent, in whole seconds as Slack sends them.
    const dbNow = async () => ((await q("SELECT EXTRACT(EPOCH FROM now())::float8 AS db"))[0] as { db: number }).db;
    const signed = (at: (db: number) => number, over: Partial<typeof base> = {}) => async () =>
      slackInteraction(signingSecret, { ...base, ...over }, at(await dbNow()));
    const now = Math.floor;
    const expiredToken = issueButtonToken(
      { orgId, runId: a.runId, stepId: a.stepId, approvalId: a.approvalId, decision: "approved", digest: a.digest },
      new Date(Date.now() - 1_000),
      new Date(),
    );
    const cases: [string, () => Promise<{ body: string; headers: Record<string, string> }>, number, string][] = [
      ["1-byte body change", async () => {
        const good = await signed(now)();
        return { ...good, body: good.body.replace("U0SAM", "U0SAN") }; // one byte changed after signing
      }, 401, "bad_signature"],
      ["timestamp 301 s old", signed((db) => Math.floor(db) - 301), 401, "stale_request"],
      ["timestamp 301 s in the future", signed((db) => Math.ceil(db) + 301), 401, "stale_request"],
      ["missing signature", async () => {
        const good = await signed(now)();
        return { body: good.body, headers: { "content-type": good.headers["content-type"] as string } };
      }, 401, "missing_signature"],
      ["token for another step", signed(now, { value: otherButtons.approve }), 403, "token_not_for_this_message"],
      ["expired token", signed(now, { value: expiredToken }), 403, "token_expired"],
      ["token for the other button", signed(now, { actionId: rejectActionId }), 403, "token_mismatch"], // the approve token on Reject
    ];
    for (const [what, make, status, code] of cases) {
      const res = await click(await make());
      const body = (await res.json()) as { error?: { code: string } };
      expect({ what, status: res.status, code: body.error?.code ?? JSON.stringify(body) }).toEqual({ what, status, code });
    }
    expect(await snapshot(a.approvalId, a.runId)).toEqual(before);

    const res = await click(await signed(now)());
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, message: "approved by Sam" });
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [a.runId]))[0]?.status === "completed", 15_000, "the run to complete");
    expect(await q("SELECT node_id FROM run_events WHERE run_id = $1 AND type = 'run.completed'", [a.runId])).toEqual([{ node_id: "sent" }]);
    // The message now shows the outcome and has no buttons.
    await waitFor(async () => slack.updates.some((u) => u.ts === message.ts && u.text.includes("Approved by Sam")), 15_000, "the Slack update");
    expect(message.blocks.some((b) => (b as { type: string }).type === "actions")).toBe(false);
    expect(slack.messages.filter((m) => m.metadata?.event_payload.approval_id === a.approvalId)).toHaveLength(1);
  });

  it("a click in the moment after the post, before the human lane stored where the message is, decides; the message is updated once stored", async () => {
    const release = slack.holdPostAnswers();
    const a = await startApproval("slack", "Clicked before stored");
    const m = await waitFor(async () => slack.messages.find((x) => x.metadata?.event_payload.approval_id === a.approvalId), 15_000, "the Slack post");
    expect(await q("SELECT slack_message FROM approvals WHERE id = $1", [a.approvalId])).toEqual([{ slack_message: null }]);
    const actions = m.blocks.find((b) => (b as { type: string }).type === "actions") as { elements: { action_id: string; value: string }[] };
    const approve = actions.elements.find((e) => e.action_id === approveActionId)?.value as string;
    const res = await click(slackInteraction(signingSecret, { teamId: slack.teamId, userId: "U0SAM", channel: m.channel, ts: m.ts, actionId: approveActionId, value: approve }));
    expect({ status: res.status, body: await res.json() }).toMatchObject({ status: 200, body: { ok: true, message: "approved by Sam" } });
    release();
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [a.runId]))[0]?.status === "completed", 15_000, "the run to complete");
    await waitFor(async () => slack.updates.some((u) => u.ts === m.ts && u.text.includes("Approved by Sam")), 15_000, "the Slack update");
    expect(slack.messages.filter((x) => x.metadata?.event_payload.approval_id === a.approvalId)).toHaveLength(1);
  });

  it("100 concurrent clicks from Slack (two people, two buttons) and the inbox: exactly one decision, 99 read-backs of it", async () => {
    const a = await startApproval("slack");
    const { message, approve, reject } = await posted(a.approvalId);
    const slackClick = (i: number) =>
      click(
        slackInteraction(signingSecret, {
          teamId: slack.teamId,
          userId: i % 4 === 0 ? "U0SAM" : "U0ALEX",
          channel: message.channel,
          ts: message.ts,
          actionId: i % 2 === 0 ? approveActionId : rejectActionId,
          value: i % 2 === 0 ? approve : reject,
          responseUrl: `${slack.origin}/response/${i}`,
        }),
      ).then(async (r) => ({ status: r.status, ...((await r.json()) as { ok: boolean; message: string }) }));
    const [samId] = (await q("SELECT id FROM users WHERE email = 'sam@acme.test'")).map((r) => r.id as string);
    const inboxClick = () =>
      decideApproval(d.t.db, { orgId, approvalId: a.approvalId, decision: "rejected", digest: a.digest, via: "inbox", actor: { userId: samId as string } }).then(
        (r) => ({ status: 200, ok: r.ok, message: r.ok ? `${r.status} by ${r.by}` : r.refusal.message }),
      );
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? slackClick(i / 2) : inboxClick())));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    const [decision] = await q("SELECT status, decided_by_name AS by FROM approvals WHERE id = $1", [a.approvalId]);
    // Everyone else reads who won; the winner's own repeated clicks read "you ... this".
    const readBack = new RegExp(`^(${decision.status} by ${decision.by} \\((slack|inbox)\\)|you ${decision.status} this) at `);
    expect(results.filter((r) => !r.ok && readBack.test(r.message))).toHaveLength(99);
    expect(await q("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'approval.decided'", [a.runId])).toEqual([{ n: 1 }]);
    // The people whose Slack clicks lost were told, privately, what won.
    await waitFor(async () => slack.ephemerals.length >= 49, 10_000, "the ephemeral notes");
    expect((slack.ephemerals[0] as { body: { text: string } }).body.text).toMatch(/^(Not recorded: (approved|rejected) by (Sam|Alex)|Already recorded: you (approved|rejected) this)/);
  });
});

describe("the approvals inbox in Chromium", () => {
  let browser: Browser;
  const shot = screenshots("approvals");
  beforeAll(async () => {
    browser = await d.launchBrowser();
  });

  it("signs in, shows the exact content and deadline, approves one and rejects another; decided ones show who and when", async () => {
    const first = await startApproval("inbox", "Draft one: Thursday at 10?");
    const second = await startApproval("inbox", "Draft two: a discount for Maya");
    const page = await browser.newPage();
    await page.goto(`${d.web.base}/approvals`);
    await page.waitForURL(/\/signin/);
    await shot(page, "signin");
    await page.fill('input[name="email"]', "sam@acme.test");
    await page.fill('input[name="password"]', "wrong password");
    await page.click('button[type="submit"]');
    await page.waitForSelector("text=do not match an account");
    await page.fill('input[name="email"]', "sam@acme.test");
    await page.fill('input[name="password"]', "correct horse battery");
    await page.click('button[type="submit"]');
    await page.waitForURL(/\/approvals$/);
    const card = (id: string) => page.locator(`li[data-approval="${id}"]`);
    await expect(card(first.approvalId).locator("pre.content").textContent()).resolves.toBe("Draft one: Thursday at 10?");
    await expect(card(second.approvalId).locator("pre.content").textContent()).resolves.toBe("Draft two: a discount for Maya");
    expect(await card(first.approvalId).textContent()).toContain("Decide by");
    await shot(page, "inbox");

    await card(first.approvalId).locator('button[value="approved"]').click();
    await page.waitForSelector("text=Approved: the run goes on.");
    await card(second.approvalId).locator('button[value="rejected"]').click();
    await page.waitForSelector("text=Rejected: the run goes on.");
    const decided = page.locator("table.decided");
    expect(await decided.locator(`tr[data-approval="${first.approvalId}"]`).textContent()).toMatch(/approved.*Sam.*inbox/);
    expect(await decided.locator(`tr[data-approval="${second.approvalId}"]`).textContent()).toMatch(/rejected.*Sam.*inbox/);
    await shot(page, "decided");
    for (const [run, end] of [
      [first.runId, "sent"],
      [second.runId, "dropped"],
    ] as const) {
      await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [run]))[0]?.status === "completed", 15_000, "the run to complete");
      expect(await q("SELECT node_id FROM run_events WHERE run_id = $1 AND type = 'run.completed'", [run])).toEqual([{ node_id: end }]);
    }

    // A stale page: the approval was decided elsewhere since it loaded. The click is refused with the winner shown.
    const third = await startApproval("inbox");
    await page.goto(`${d.web.base}/approvals`);
    await decideApproval(d.t.db, { orgId, approvalId: third.approvalId, decision: "rejected", digest: third.digest, via: "slack", actor: { slackUserId: "U0SAM" } });
    await card(third.approvalId).locator('button[value="approved"]').click();
    // Sam decided it himself in Slack: the page reads back his own decision.
    await page.waitForSelector("text=Already recorded: you rejected this at");
    await shot(page, "refused");
    await page.close();
  });
});
