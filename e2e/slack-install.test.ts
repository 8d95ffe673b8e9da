import { decryptSecret } from "@holdfast/core/providers";
import {
  addMember,
  approvalGraph,
  productProcesses,
  publish,
  type SlackApi,
  screenshots,
  signedInPage,
  startSlackApi,
  startTestDeployment,
  startTestRun,
  type TestDeployment,
  waitFor,
} from "@holdfast/testkit";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Add to Slack in Chromium against the built web app and the local Slack server (consent page, oauth.v2.access,
 * users.lookupByEmail): the state is checked (a replayed one and another session's are refused), the connection and
 * the members' links appear; then the app is removed in Slack: the human lane's post is parked with "reconnect
 * Slack", the inbox still decides, and Reconnect Slack posts what was parked.
 */
let d: TestDeployment;
let slack: SlackApi;
let browser: Browser;
let orgId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shot = screenshots("slack-install");

beforeAll(async () => {
  d = await startTestDeployment();
  slack = d.closeAtStop(await startSlackApi({ users: { "sam@acme.test": "U0SAM", "lena@acme.test": "U0LENA" } }));
  orgId = (await publish(d.t.db, approvalGraph({ slack: { connection: "slack", channel: "C0APPROVALS" } }), { automation: "slack" })).orgId;
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "owner");
  await addMember(d.t.db, orgId, "lena@acme.test", "Lena", "approver", { password: null });
  await addMember(d.t.db, orgId, "kim@acme.test", "Kim", "approver", { password: null, slackUserId: "U0KIMHAND" });
  await addMember(d.t.db, orgId, "vic@acme.test", "Vic", "viewer", { password: null });
  const web = await d.startWeb({ SLACK_CLIENT_ID: slack.clientId, SLACK_CLIENT_SECRET: slack.clientSecret, SLACK_API_URL: slack.apiUrl, SLACK_AUTHORIZE_URL: slack.authorizeUrl });
  await d.startApps(productProcesses({ human: { HOLDFAST_PUBLIC_URL: web.base } }), 90_000);
  // The stand-in for Slack's consent page is the test's own, not Holdfast's: the page audit leaves it out.
  browser = await d.launchBrowser({ audit: { ignoreUrls: [new RegExp(`^${slack.origin.replaceAll(".", "\\.")}/`)] } });
});

afterAll(async () => d?.stop());

/** Settings -> Add to Slack (or Reconnect) -> Slack's consent page -> Allow; the callback URL Slack sent the browser to. */
async function addToSlack(page: Page, button: RegExp, consentShot?: string): Promise<string> {
  await page.goto(`${d.web.base}/settings?org=acme`);
  await page.getByRole("button", { name: button }).click();
  await page.waitForURL(/\/oauth\/v2\/authorize/);
  if (consentShot) await shot(page, consentShot);
  const callback = page.waitForRequest((r) => r.url().includes("/api/slack/oauth"));
  await page.click("#allow");
  const url = (await callback).url();
  await page.waitForURL(/\/settings\?/);
  return url;
}

describe("Add to Slack", () => {
  let callbackUrl = "";

  it("completes in Chromium: the connection 'slack' with the workspace, the bot token encrypted, members linked by email", async () => {
    const page = await signedInPage(browser, d.web.base, "sam@acme.test");
    await page.goto(`${d.web.base}/settings?org=acme`);
    await page.waitForSelector("text=Not connected");
    await shot(page, "before");
    callbackUrl = await addToSlack(page, /^Add to Slack$/, "consent");
    await page.waitForSelector("text=Slack added: workspace Acme");
    expect(await page.locator("p.flash-ok").textContent()).toMatch(/2 members linked by email; no Slack user found for vic@acme.test/);
    await shot(page, "added");
    const [c] = await q("SELECT id, kind, status, config, secret FROM connections WHERE org_id = $1 AND name = 'slack'", [orgId]);
    expect(c).toMatchObject({ kind: "slack", status: "ok", config: { teamId: slack.teamId, apiUrl: slack.apiUrl } });
    expect(c.secret).not.toContain("xoxb");
    expect(decryptSecret(c.secret, orgId, c.id)).toBe(slack.exchanges[0]?.token);
    const links = await q("SELECT u.email, m.slack_user_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 ORDER BY u.email", [orgId]);
    expect(links).toEqual([
      { email: "kim@acme.test", slack_user_id: "U0KIMHAND" }, // set by hand: kept
      { email: "lena@acme.test", slack_user_id: "U0LENA" },
      { email: "sam@acme.test", slack_user_id: "U0SAM" },
      { email: "vic@acme.test", slack_user_id: null }, // Slack has no such user
    ]);
    await page.close();
  });

  it("a replayed state and another session's state are refused; nothing more is exchanged", async () => {
    const exchanged = slack.exchanges.length;
    const page = await signedInPage(browser, d.web.base, "sam@acme.test");
    // This browser context has another session: the state was signed for the first one.
    await page.goto(callbackUrl);
    await page.waitForSelector("text=not started from this browser session");
    await shot(page, "foreign-state");
    // In the session that started it, the same state a second time.
    const second = await signedInPage(browser, d.web.base, "sam@acme.test");
    const fresh = await addToSlack(second, /Add to Slack again/);
    await second.waitForSelector("text=Slack reconnected");
    await second.goto(fresh);
    await second.waitForSelector("text=already used");
    await shot(second, "replayed-state");
    expect(slack.exchanges.length).toBe(exchanged + 1);
    await second.close();
    await page.close();
  });

  it("a revoked token parks the post with 'reconnect Slack'; the inbox still decides; Reconnect Slack posts what was parked", async () => {
    slack.revoke();
    const posts = slack.messages.length;
    const parkedRun = await startTestRun(d.t.db, "slack", { id: "evt_parked", email: "maya@example.com", draft: "Hello Maya" });
    const decidedRun = await startTestRun(d.t.db, "slack", { id: "evt_inbox", email: "lee@example.com", draft: "Hello Lee" });
    const [decided] = await waitFor(async () => {
      const r = await q("SELECT id, notify_state, notify_error FROM approvals WHERE run_id = $1", [decidedRun]);
      return r[0]?.notify_state === "failed" ? r : undefined;
    }, 30_000, "the post to be parked");
    expect(decided.notify_error).toMatch(/token_revoked.*reconnect Slack/);
    expect(await q("SELECT status FROM connections WHERE org_id = $1 AND name = 'slack'", [orgId])).toEqual([{ status: "needs_reconnect" }]);
    expect(slack.messages.length).toBe(posts);

    const page = await signedInPage(browser, d.web.base, "sam@acme.test");
    const card = page.locator(`li[data-approval="${decided.id}"]`);
    await card.locator('button[value="approved"]').click();
    await page.waitForSelector("text=Approved: the run goes on.");
    await waitFor(async () => (await q("SELECT status FROM runs WHERE id = $1", [decidedRun]))[0]?.status === "completed", 20_000, "the run decided in the inbox to complete");
    await page.goto(`${d.web.base}/settings?org=acme`);
    await page.waitForSelector("text=Needs reconnecting");
    await shot(page, "revoked");

    await addToSlack(page, /^Reconnect Slack$/);
    await page.waitForSelector("text=Slack reconnected");
    await shot(page, "reconnected");
    const [parked] = await q("SELECT id FROM approvals WHERE run_id = $1", [parkedRun]);
    await waitFor(async () => slack.messages.find((m) => m.metadata?.event_payload.approval_id === parked.id), 30_000, "the parked approval to be posted");
    expect(await q("SELECT status FROM connections WHERE org_id = $1 AND name = 'slack'", [orgId])).toEqual([{ status: "ok" }]);
    await page.close();
  });
});
