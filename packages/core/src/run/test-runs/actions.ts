import { DateTime } from "luxon";
import { type Db, inTx } from "@holdfast/db";
import { decideApproval } from "../../people/approvals/decide";
import { HoldfastError } from "../../base/errors";
import { approvalsForRun } from "../../store/sql/approvals";
import { runEventsInsert } from "../../store/sql/run-events";
import { type StepView, stepsViewOfRun } from "../../store/sql/steps-view";
import { testRunsAdvanceClockTo, testRunsGet } from "../../store/sql/test-runs";
import { timersPendingOfStep } from "../../store/sql/timers-pending";
import { fireWaitNow } from "../runs/fire-wait";
import { skipTestHold } from "./held";
import type { GraphCache } from "../../versions/graph-cache";
import { ingestEmailReply } from "../../people/signals/email";
import type { Graph } from "../../versions/graph";

/**
 * What a tester does on a test run's page (issue 40): skip a wait to the instant it would fire (the run's virtual
 * clock jumps there, and the wait fires through the timers' own path: rescheduled to now, fired once by the relay and
 * engine however many clicks), decide an approval as one of its approvers (the approver rules checked as for real),
 * and simulate a reply or its absence. Each writes the run's timeline with who did it. Only test runs: a real run's
 * wait is fired by "Fire this wait now".
 */
export class TestRunError extends HoldfastError {}

export type SkipOutcome = { kind: "skipped"; virtualAt: Date; zone: string } | { kind: "already"; message: string };

async function requireTestRun(db: Db, orgId: string, runId: string) {
  const row = await testRunsGet(db, orgId, runId);
  if (!row) throw new TestRunError("not_a_test_run", "this is not a test run: only a test run's waits can be skipped and its replies simulated here");
  return row;
}

/**
 * Skips the step's wait: the virtual clock moves to the instant it would fire, then the wait fires now through the
 * same path as "Fire this wait now" (run/runs/fire-wait.ts: the sweeper's firing statement, the run walked in the same
 * transaction, so its next wait counts from that instant). A repeat reads back what happened.
 */
export async function skipTestWait(db: Db, graphs: GraphCache, t: { orgId: string; runId: string; stepId: string; by: string }): Promise<SkipOutcome> {
  await requireTestRun(db, t.orgId, t.runId);
  const timer = await inTx(db, async (tx) => {
    const pending = await timersPendingOfStep(tx, t.orgId, t.stepId);
    if (!pending || pending.runId !== t.runId) return null;
    // Only forward: a skip of an instant already behind the clock leaves it.
    await testRunsAdvanceClockTo(tx, t.orgId, t.runId, pending.dueAt);
    return pending;
  });
  // Not a wait: a send held by a sending rule is skipped to its instant the same way (held.ts).
  if (!timer) return (await skipTestHold(db, t)) ?? { kind: "already", message: "this step no longer waits (its wait fired or its send went): the run has moved on" };
  const fired = await fireWaitNow(db, graphs, {
    orgId: t.orgId,
    runId: t.runId,
    stepId: t.stepId,
    by: t.by,
    reason: `skipped in a test run to ${DateTime.fromJSDate(timer.dueAt, { zone: timer.zone }).setLocale("en-GB").toFormat("ccc d LLL HH:mm")} ${timer.zone}`,
  });
  if (fired.kind !== "fired") return { kind: "already", message: `this wait already fired at ${fired.firedAt.toISOString()}` };
  await inTx(db, (tx) =>
    runEventsInsert(tx, [{ orgId: t.orgId, runId: t.runId, stepId: t.stepId, type: "test.skipped", worker: t.by, data: { virtualAt: timer.dueAt.toISOString(), zone: timer.zone } }]),
  );
  return { kind: "skipped", virtualAt: timer.dueAt, zone: timer.zone };
}

/** An approval of the test run decided by the tester as `asUserId` (one of its approvers: checked as for real). */
export async function decideTestApproval(db: Db, t: { orgId: string; runId: string; approvalId: string; decision: "approved" | "rejected"; asUserId: string; by: string }) {
  await requireTestRun(db, t.orgId, t.runId);
  const approval = (await inTx(db, (tx) => approvalsForRun(tx, t.orgId, t.runId))).find((a) => a.id === t.approvalId);
  if (!approval) throw new TestRunError("approval_not_found", "this approval is not one of this test run's");
  const result = await decideApproval(db, { orgId: t.orgId, approvalId: t.approvalId, decision: t.decision, digest: approval.digest, via: "test", actor: { userId: t.asUserId } });
  if (result.ok) {
    await inTx(db, (tx) =>
      runEventsInsert(tx, [{ orgId: t.orgId, runId: t.runId, stepId: approval.stepId, type: "test.decided", worker: t.by, data: { decision: t.decision, as: result.by } }]),
    );
  }
  return result;
}

/**
 * A reply to the email the step waits on, from the address it was sent to (so it is believed, as a real one would
 * be), through the inbound path: the branch follows it as it would a real reply. `text` null: "no reply", the
 * reply wait's deadline is skipped instead.
 */
export async function simulateTestReply(db: Db, graphs: GraphCache, t: { orgId: string; orgSlug: string; runId: string; stepId: string; text: string | null; by: string }) {
  await requireTestRun(db, t.orgId, t.runId);
  if (t.text === null) return skipTestWait(db, graphs, t);
  const steps = await inTx(db, (tx) => stepsViewOfRun(tx, t.orgId, t.runId));
  const waiting = steps.find((s) => s.id === t.stepId);
  if (!waiting || waiting.kind !== "wait_for_reply") throw new TestRunError("not_a_reply_wait", "this step does not wait for a reply");
  if (waiting.status !== "waiting") return { kind: "already" as const, message: "this step is no longer waiting for a reply" };
  const sent = latestSentEmail(steps);
  if (!sent) throw new TestRunError("no_email", "no email of this test run was sent (simulated) yet, so there is nothing to reply to");
  const outcome = await ingestEmailReply(db, t.orgSlug, {
    messageId: `<test-reply.${t.stepId}.${Date.now()}@holdfast.test>`,
    from: sent.to,
    subject: `Re: ${sent.subject}`,
    inReplyTo: sent.messageId,
    text: t.text,
  });
  await inTx(db, (tx) => runEventsInsert(tx, [{ orgId: t.orgId, runId: t.runId, stepId: t.stepId, type: "test.replied", worker: t.by, data: { from: sent.to } }]));
  return { kind: "replied" as const, consumed: outcome.consumed };
}

function latestSentEmail(steps: StepView[]): { to: string; subject: string; messageId: string } | null {
  for (const s of [...steps].reverse()) {
    const o = s.output as { messageId?: unknown; to?: unknown; subject?: unknown } | null;
    if (s.kind === "send_email" && s.status === "done" && typeof o?.messageId === "string" && typeof o.to === "string") {
      return { to: o.to, subject: typeof o.subject === "string" ? o.subject : "", messageId: o.messageId };
    }
  }
  return null;
}

/** The run's steps that wait for the tester now, in the order they were made, with what can be done to each. */
export function waitingForTester(graph: Graph, steps: StepView[]): { stepId: string; nodeId: string; kind: string }[] {
  return steps
    .filter((s) => s.status === "waiting" && graph.nodes.some((n) => n.id === s.nodeId))
    .map((s) => ({ stepId: s.id, nodeId: s.nodeId, kind: s.kind }));
}
