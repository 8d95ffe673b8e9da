import { type Db, inTx, type Tx } from "@holdfast/db";
import { crashpoint } from "../../base/crash";
import { NotFoundError } from "../../base/errors";
import {
  type ApprovalRow,
  type ApprovalStatus,
  approvalKey,
  approvalsDecide,
  approvalsLockForDecision,
  approvalsRevise,
} from "../../store/sql/approvals";
import { membershipsIdentityOfSlackUser, membershipsIdentityOfUser } from "../../store/sql/memberships";
import { runsLockForApproval } from "../../store/sql/runs";
import { outboxInsert } from "../../store/sql/outbox";
import { runEventsInsert } from "../../store/sql/run-events";
import { approvalEditsMadeDigest } from "../../store/sql/approval-edits";
import { signalsConsumeWaiting, signalsInsert } from "../../store/sql/signals";
import type { Decision } from "../../versions/graph";
import { contentDigest } from "./digest";
import { type Decider, judge, mayDecide, type Refusal, readBackTime, type Role } from "./judge";

export type DecisionActor = { userId: string } | { slackUserId: string };

export interface DecisionRequest {
  orgId: string;
  approvalId: string;
  decision: Decision;
  /** The digest of the content the decider saw (the button's token, the inbox form). */
  digest: string;
  /** Where the decision was taken: Slack, the inbox, or a test run's page (the tester deciding as an approver). */
  via: "slack" | "inbox" | "test";
  actor: DecisionActor;
}

export type DecisionResult =
  | { ok: true; approval: Pick<ApprovalRow, "id" | "runId" | "stepId">; status: ApprovalStatus; by: string }
  | { ok: false; refusal: Refusal; approval: Pick<ApprovalRow, "id" | "runId" | "stepId"> };

/** The deadline's timer took the step while this decision waited for it: the deadline won. */
class DeadlineWon extends Error {}

/**
 * One decision on one approval. Under the approval's row lock (so concurrent clicks queue and the first wins), the
 * decider's membership is read as it is now, and `judge` says whether the decision may be taken. If so, the decision,
 * its signal, the step's settle (its deadline timer closed), the run's wake-up, the Slack update owed and the timeline
 * rows commit together (recordDecision).
 */
export async function decideApproval(db: Db, req: DecisionRequest): Promise<DecisionResult> {
  return withApprovalLock(db, req, async (tx, a, decider) => {
    const refusal = await judgeNow(tx, a, decider, req.digest);
    if (refusal) return refused(tx, a, decider, req, refusal);
    return recordDecision(tx, a, decider, req);
  });
}

export type LockedApproval = NonNullable<Awaited<ReturnType<typeof approvalsLockForDecision>>>;
type Ref = Pick<ApprovalRow, "id" | "runId" | "stepId">;
export type Refused = { ok: false; refusal: Refusal; approval: Ref };
/** What a refusal's timeline row says of the request (an edit names itself). */
export type LockRequest = Pick<DecisionRequest, "orgId" | "approvalId" | "decision" | "via" | "actor"> & { action?: "edit" };

/**
 * Runs `body` in one transaction under the approval's lock, with the decider's membership as it is now. The run is
 * locked first, as the engine and cancel take it (FOR NO KEY UPDATE: a timer firing's timeline insert, which only
 * key-shares the run, is not blocked), then the approval: no lock-order deadlock with a stopping run. A decision
 * that finds the deadline's timer took the step first rolls everything back and is recorded as refused.
 */
export async function withApprovalLock<R>(db: Db, req: LockRequest, body: (tx: Tx, a: LockedApproval, decider: Decider) => Promise<R>): Promise<R | Refused> {
  try {
    return await inTx(db, async (tx) => {
      await runsLockForApproval(tx, req.orgId, req.approvalId);
      const a = await approvalsLockForDecision(tx, req.orgId, req.approvalId);
      if (!a) throw new NotFoundError("approval_not_found", `approval ${req.approvalId}`);
      return body(tx, a, await deciderOf(tx, req.orgId, req.actor));
    });
  } catch (error) {
    if (!(error instanceof DeadlineWon)) throw error;
    // Rolled back: the timer fired first. Say so on the timeline (outside the rolled-back transaction).
    return inTx(db, async (tx) => {
      const a = await approvalsLockForDecision(tx, req.orgId, req.approvalId);
      if (!a) throw new NotFoundError("approval_not_found", `approval ${req.approvalId}`);
      const decider = await deciderOf(tx, req.orgId, req.actor);
      return refused(tx, a, decider, req, { reason: "deadline_passed", message: "the deadline passed before this decision" });
    });
  }
}

/**
 * `judge`, and when the content changed since the decider saw it because someone edited the draft, who and when:
 * "Sam edited the draft at 10:02 UTC on ... after this was shown to you" (told only to someone who may decide).
 */
export async function judgeNow(tx: Tx, a: LockedApproval, decider: Decider, digest: string): Promise<Refusal | null> {
  const refusal = judge(a, decider, digest);
  if (refusal?.reason !== "content_changed") return refusal;
  if (!mayDecide(a.approvers, decider)) return { reason: "not_permitted", message: "you may not decide this approval" };
  const edit = await approvalEditsMadeDigest(tx, a.orgId, a.id, a.digest);
  if (!edit) return refusal;
  const who = edit.editedBy === decider.userId ? "you" : edit.editedByName;
  return {
    reason: "content_changed",
    message: `${who} edited the draft at ${readBackTime(edit.createdAt)} after this was shown to you; read the new version before deciding`,
  };
}

/**
 * Records the decision on the locked, pending approval: the decision, its signal, the step's settle (its deadline
 * timer closed), the run's wake-up, the Slack update owed and the timeline row. Throws DeadlineWon (rolling the
 * transaction back) when the deadline's timer took the step first.
 */
export async function recordDecision(
  tx: Tx,
  a: LockedApproval,
  decider: Decider,
  req: Pick<DecisionRequest, "orgId" | "decision" | "via">,
): Promise<Extract<DecisionResult, { ok: true }>> {
  const { notify } = await approvalsDecide(tx, req.orgId, a.id, { status: req.decision, by: decider.userId, byName: decider.name, via: req.via });
  const signalId = await signalsInsert(tx, {
    orgId: req.orgId,
    kind: "approval",
    identity: approvalKey(a.id),
    correlationKeys: [approvalKey(a.id)],
    payload: { approvalId: a.id, decision: req.decision, by: decider.userId, byName: decider.name, via: req.via, stage: a.stage, digest: a.digest },
  });
  if (!signalId) throw new Error(`approval ${a.id}: its signal identity is already taken`);
  if (!(await signalsConsumeWaiting(tx, req.orgId, a.stepId, `${req.via}:${decider.userId}`))) throw new DeadlineWon();
  await runEventsInsert(tx, [
    {
      orgId: req.orgId,
      runId: a.runId,
      stepId: a.stepId,
      nodeId: a.nodeId,
      type: "approval.decided",
      worker: `${req.via}:${decider.userId}`,
      data: { approvalId: a.id, decision: req.decision, by: decider.name, userId: decider.userId, via: req.via, stage: a.stage },
    },
  ]);
  if (notify) await outboxInsert(tx, [{ orgId: req.orgId, runId: a.runId, topic: "approval.notify", payload: { orgId: req.orgId, approvalId: a.id } }]);
  crashpoint("approval.before_commit");
  return { ok: true as const, approval: { id: a.id, runId: a.runId, stepId: a.stepId }, status: req.decision, by: decider.name };
}

/** A refusal changes nothing but the timeline, where it is recorded with its reason. */
export async function refused(tx: Tx, a: ApprovalRow, decider: Decider, req: LockRequest, refusal: Refusal): Promise<Refused> {
  await recordRefusal(tx, a, decider, req, refusal);
  return { ok: false as const, refusal, approval: { id: a.id, runId: a.runId, stepId: a.stepId } };
}

async function deciderOf(tx: Tx, orgId: string, actor: DecisionActor): Promise<Decider> {
  const found =
    "userId" in actor ? await membershipsIdentityOfUser(tx, orgId, actor.userId) : await membershipsIdentityOfSlackUser(tx, orgId, actor.slackUserId);
  const who = "userId" in actor ? actor.userId : `slack:${actor.slackUserId}`;
  return found ?? { userId: who, email: "", name: who, role: null };
}

async function recordRefusal(tx: Tx, a: ApprovalRow, decider: Decider, req: LockRequest, refusal: Refusal): Promise<void> {
  await runEventsInsert(tx, [
    {
      orgId: a.orgId,
      runId: a.runId,
      stepId: a.stepId,
      nodeId: a.nodeId,
      type: "approval.refused",
      worker: `${req.via}:${decider.userId}`,
      data: {
        approvalId: a.id,
        decision: req.decision,
        ...(req.action ? { action: req.action } : {}),
        by: decider.name,
        userId: decider.userId,
        via: req.via,
        reason: refusal.reason,
        message: refusal.message,
        ...(refusal.reason === "already_decided" && refusal.mine ? { mine: true } : {}),
      },
    },
  ]);
}

/**
 * The content under review changed (a redraft, an operator's correction): a new digest, so every decision bound to
 * the old content (an open inbox page, a Slack button) is refused; the Slack message is updated with new buttons.
 */
export async function reviseApproval(db: Db, orgId: string, approvalId: string, content: string, by: string): Promise<ApprovalRow> {
  return inTx(db, async (tx) => {
    const current = await approvalsLockForDecision(tx, orgId, approvalId);
    if (!current) throw new NotFoundError("approval_not_found", `approval ${approvalId}`);
    const digest = contentDigest(current.title, content);
    const revised = await approvalsRevise(tx, orgId, approvalId, content, digest);
    if (!revised) return current;
    await runEventsInsert(tx, [
      {
        orgId,
        runId: revised.runId,
        stepId: revised.stepId,
        nodeId: revised.nodeId,
        type: "approval.content_changed",
        worker: by,
        data: { approvalId, from: current.digest.slice(0, 12), to: digest.slice(0, 12) },
      },
    ]);
    if (revised.notifyState === "post" || revised.notifyState === "update") {
      await outboxInsert(tx, [{ orgId, runId: revised.runId, topic: "approval.notify", payload: { orgId, approvalId } }]);
    }
    return revised;
  });
}

export type { Role };
