import { approvalGraph, createTestDatabase, publish, type SlackApi, startSlackApi, startTestRun, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notifyApproval } from "../src/people/approvals/notify";
import { sessionIdOf, signIn } from "../src/people/auth/sessions";
import { upsertMember } from "../src/people/auth/users";
import { decryptSecret } from "../src/providers/connections/secrets";
import { createLogger } from "../src/base/log";
import { finishSlackInstall, installStateOrg, type SlackApp, startSlackInstall } from "../src/people/slack/install";
import { connectionsByName } from "../src/store/sql/connections";

let t: TestDatabase;
let slack: SlackApi;
let app: SlackApp;
let orgId = "";
let ownerId = "";
let session = "";
const log = createLogger("test", "silent");
const q = async (sql: string, p: unknown[] = []) => (await t.sql.query(sql, p)).rows;

beforeAll(async () => {
  t = await createTestDatabase();
  slack = await startSlackApi({ users: { "sam@acme.test": "U0SAM", "lena@acme.test": "U0LENA", "kim@acme.test": "U0KIM" } });
  orgId = (await publish(t.db, approvalGraph({ slack: { connection: "slack", channel: "C0APPROVALS" } }), { automation: "slack" })).orgId;
  ownerId = await upsertMember(t.db, { orgId, email: "sam@acme.test", name: "Sam", password: "correct horse battery", role: "owner" });
  await upsertMember(t.db, { orgId, email: "lena@acme.test", name: "Lena", password: null, role: "approver" });
  await upsertMember(t.db, { orgId, email: "kim@acme.test", name: "Kim", password: null, role: "approver", slackUserId: "U0KIMHAND" });
  await upsertMember(t.db, { orgId, email: "nobody@acme.test", name: "Nobody", password: null, role: "viewer" });
  const signed = await signIn(t.db, "sam@acme.test", "correct horse battery");
  session = sessionIdOf(signed?.token as string);
  app = { clientId: slack.clientId, clientSecret: slack.clientSecret, apiUrl: slack.apiUrl, authorizeUrl: slack.authorizeUrl, redirectUri: "http://localhost:3000/api/slack/oauth" };
});
afterAll(async () => {
  await slack?.close();
  await t?.drop();
});

/** Starts an install and presses Allow on the local Slack's consent page: the state and code it sends back. */
async function consent(sessionId = session): Promise<{ state: string; code: string }> {
  const url = new URL(await startSlackInstall(t.db, { orgId, userId: ownerId, sessionId }, app));
  expect(url.origin + url.pathname).toBe(slack.authorizeUrl);
  expect(url.searchParams.get("scope")).toContain("users:read.email");
  const allow = await fetch(`${slack.origin}/oauth/v2/allow${url.search}`, { redirect: "manual" });
  const back = new URL(allow.headers.get("location") as string);
  expect(back.origin + back.pathname).toBe(app.redirectUri);
  return { state: back.searchParams.get("state") as string, code: back.searchParams.get("code") as string };
}
const finish = (c: { state: string; code: string }, sessionId = session, mayInstall = true) =>
  finishSlackInstall(t.db, { ...c, sessionId, actor: "user:sam@acme.test", mayInstall: () => mayInstall }, app);

describe("Add to Slack", () => {
  it("exchanges the code, stores the bot token encrypted as the connection 'slack' with its team id, links members by email", async () => {
    const result = await finish(await consent());
    expect(result).toMatchObject({ orgId, teamId: slack.teamId, created: true });
    expect(result.links.linked).toEqual([
      { email: "lena@acme.test", slackUserId: "U0LENA" },
      { email: "sam@acme.test", slackUserId: "U0SAM" },
    ]);
    expect(result.links.kept).toEqual(["kim@acme.test"]); // set by hand: stays
    expect(result.links.unmatched).toEqual(["nobody@acme.test"]);
    const c = await connectionsByName(t.db, orgId, "slack");
    expect(c).toMatchObject({ kind: "slack", status: "ok", config: { teamId: slack.teamId, apiUrl: slack.apiUrl } });
    expect(c?.secret).not.toContain("xoxb");
    expect(decryptSecret(c?.secret as string, orgId, c?.id as string)).toBe(slack.exchanges[0]?.token);
    expect(await q("SELECT slack_user_id FROM memberships WHERE org_id = $1 ORDER BY slack_user_id", [orgId])).toEqual([
      { slack_user_id: "U0KIMHAND" },
      { slack_user_id: "U0LENA" },
      { slack_user_id: "U0SAM" },
      { slack_user_id: null },
    ]);
  });

  it("a replayed state, another session's state, a changed state and an expired one are refused; nothing is exchanged", async () => {
    const used = await consent();
    await finish(used);
    const exchanged = slack.exchanges.length;
    await expect(finish(used)).rejects.toMatchObject({ code: "state_used", message: expect.stringMatching(/already used/) });

    const signedOther = await signIn(t.db, "sam@acme.test", "correct horse battery");
    const other = sessionIdOf(signedOther?.token as string);
    const foreign = await consent(other);
    await expect(finish(foreign)).rejects.toMatchObject({ code: "state_invalid", message: expect.stringMatching(/not started from this browser session/) });
    expect(installStateOrg(foreign.state, session)).toBeNull();
    const changed = { ...foreign, state: foreign.state.replace(/^org_[a-z0-9]+/, "org_00000000000000000000000000000000") };
    await expect(finish(changed, other)).rejects.toMatchObject({ code: "state_invalid" });

    const late = await consent();
    await q("UPDATE slack_install_states SET created_at = created_at - interval '11 minutes', expires_at = expires_at - interval '11 minutes' WHERE used_at IS NULL AND session_id = $1", [session]);
    await expect(finish(late)).rejects.toMatchObject({ code: "state_expired" });
    await expect(finish(await consent(), session, false)).rejects.toMatchObject({ code: "forbidden" });
    expect(slack.exchanges.length).toBe(exchanged);
    // The foreign session's own state still works once, for that session.
    await expect(finish(foreign, other)).resolves.toMatchObject({ created: false });
  });

  it("a revoked token parks the approval's post with 'reconnect Slack', the connection needs reconnecting, and Add to Slack again posts it", async () => {
    slack.revoke();
    const runId = await startTestRun(t.db, "slack", { id: "evt_revoked", email: "maya@example.com", draft: "Hello" });
    const [a] = await q("SELECT id FROM approvals WHERE run_id = $1", [runId]);
    const posts = slack.messages.length;
    expect(await notifyApproval(t.db, { orgId, approvalId: a.id }, { log, publicUrl: null, worker: "w" })).toBe("failed");
    const [row] = await q("SELECT status, notify_state, notify_error FROM approvals WHERE id = $1", [a.id]);
    expect(row).toMatchObject({ status: "pending", notify_state: "failed" });
    expect(row.notify_error).toMatch(/token_revoked.*reconnect Slack/);
    expect(await connectionsByName(t.db, orgId, "slack")).toMatchObject({ status: "needs_reconnect", statusReason: expect.stringMatching(/reconnect Slack/) });
    expect(slack.messages.length).toBe(posts);

    const wakeups = async () => (await q("SELECT count(*)::int AS n FROM outbox WHERE topic = 'approval.notify' AND payload->>'approvalId' = $1", [a.id]))[0].n;
    const before = await wakeups();
    const again = await finish(await consent());
    expect(again).toMatchObject({ created: false, renotified: 1 });
    expect(await connectionsByName(t.db, orgId, "slack")).toMatchObject({ status: "ok", statusReason: null });
    const [owed] = await q("SELECT notify_state FROM approvals WHERE id = $1", [a.id]);
    expect(owed.notify_state).toBe("post");
    expect(await wakeups()).toBe(before + 1);
    expect(await notifyApproval(t.db, { orgId, approvalId: a.id }, { log, publicUrl: null, worker: "w" })).toBe("posted");
    const types = (await q("SELECT type FROM run_events WHERE run_id = $1 AND type LIKE 'approval.%' ORDER BY id", [runId])).map((r) => r.type);
    expect(types).toEqual(expect.arrayContaining(["approval.notify_failed", "approval.notify_resumed", "approval.posted"]));
  });
});
