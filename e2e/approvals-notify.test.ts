import { createConnection } from "@holdfast/core/providers";
import { type AppProcess, addMember, approvalGraph, publish, type SlackApi, startSlackApi, startTestDeployment, startTestRun, type TestDeployment, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * An approval's Slack post is not repeatable (Slack takes no idempotency key). The human lane is SIGKILLed right
 * after Slack accepted the post and before its place was stored: the next attempt finds the message by its metadata
 * instead of posting again. Errors Slack will repeat are marked failed on the timeline; passing ones are retried.
 */
let d: TestDeployment;
let slack: SlackApi;
let lane: AppProcess;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  slack = d.closeAtStop(await startSlackApi());
  const { orgId } = await publish(d.t.db, approvalGraph({ slack: { connection: "slack", channel: "C0APPROVALS" } }), { automation: "slack" });
  await publish(d.t.db, approvalGraph({ slack: { connection: "slack", channel: "C0NOSUCH" } }), { automation: "nochannel" });
  await createConnection(d.t.db, { orgId, kind: "slack", name: "slack", config: { teamId: slack.teamId, apiUrl: slack.apiUrl }, secret: slack.token });
  await addMember(d.t.db, orgId, "sam@acme.test", "Sam", "approver", { password: null });
  const env = { APPROVAL_NOTIFY_LEASE_SECONDS: "4" };
  const started = await d.startApps([
    { app: "lane-worker", env: { ...env, LANE: "human" }, crash: { point: "notify.after_post", cycles: 1 } },
    { app: "relay", env: { ...env, RELAY_POLL_MS: "200" } },
    { app: "sweeper", env: { ...env, SWEEP_INTERVAL_MS: "500" } },
  ]);
  lane = started[0] as AppProcess;
});

afterAll(async () => d?.stop());

let seq = 0;
async function requested(automation: string): Promise<{ runId: string; approvalId: string }> {
  const runId = await startTestRun(d.t.db, automation, { id: `evt_${++seq}`, email: "maya@example.com", draft: "Hello" });
  const [a] = await q("SELECT id FROM approvals WHERE run_id = $1", [runId]);
  return { runId, approvalId: a.id };
}

describe("the Slack post", () => {
  it("SIGKILL after Slack accepted the post, before it was stored: found by its metadata, never posted twice", async () => {
    const a = await requested("slack");
    await waitFor(async () => lane.kills() === 1, 30_000, "the lane worker to die after posting");
    expect(slack.posts).toBe(1);
    const [row] = await waitFor(async () => {
      const r = await q("SELECT notify_state, slack_message FROM approvals WHERE id = $1", [a.approvalId]);
      return r[0]?.notify_state === "done" ? r : undefined;
    }, 40_000, "the notification to be found and stored");
    expect(slack.posts).toBe(1);
    expect(slack.messages).toHaveLength(1);
    expect(row.slack_message).toEqual({ channel: "C0APPROVALS", ts: slack.messages[0]?.ts });
    // Found, not posted again (a second notifier woken by the sweep may update the same message once more).
    const types = (await q("SELECT type FROM run_events WHERE run_id = $1 AND type LIKE 'approval.%' ORDER BY id", [a.runId])).map((r) => r.type);
    expect(types[0]).toBe("approval.requested");
    expect(types).toContain("approval.message_updated");
    expect(types).not.toContain("approval.posted");
  });

  it("a passing Slack error is retried; one Slack will repeat (no such channel) fails visibly on the timeline", async () => {
    slack.failNextPosts(1, "ratelimited");
    const before = slack.posts;
    const retried = await requested("slack");
    await waitFor(async () => (await q("SELECT notify_state FROM approvals WHERE id = $1", [retried.approvalId]))[0]?.notify_state === "done", 40_000, "the retried post");
    expect(slack.posts - before).toBe(2);
    expect(slack.messages.filter((m) => m.metadata?.event_payload.approval_id === retried.approvalId)).toHaveLength(1);

    const broken = await requested("nochannel");
    const [row] = await waitFor(async () => {
      const r = await q("SELECT notify_state, notify_error FROM approvals WHERE id = $1", [broken.approvalId]);
      return r[0]?.notify_state === "failed" ? r : undefined;
    }, 30_000, "the post to fail");
    expect(row.notify_error).toBe("channel_not_found");
    expect(await q("SELECT data->>'error' AS error FROM run_events WHERE run_id = $1 AND type = 'approval.notify_failed'", [broken.runId])).toEqual([
      { error: "channel_not_found" },
    ]);
    // The approval itself still waits: it can be decided in the inbox.
    expect(await q("SELECT status FROM approvals WHERE id = $1", [broken.approvalId])).toEqual([{ status: "pending" }]);
  });
});
