import type { ApprovalStatus, DecidedVia } from "../../store/sql/approvals";
import type { Role } from "../../store/sql/memberships";
import type { Approvers } from "../../versions/graph";

export type { Role };

/**
 * Whether a decision may be taken, as a pure function of what was read under the approval's lock. The order matters:
 * someone who may not see the approval learns nothing about it; otherwise the decision that won, a stopped run, a
 * passed deadline and changed content are each told apart.
 */
export interface Decider {
  userId: string;
  email: string;
  name: string;
  /** The decider's role in the approval's organisation now (null: not a member, or no longer). */
  role: Role | null;
}

export interface ApprovalView {
  status: ApprovalStatus;
  approvers: Approvers;
  digest: string;
  pastDeadline: boolean;
  runStatus: string;
  cancelRequested: boolean;
  /** The user id of whoever decided (null for the deadline or a stopped run). */
  decidedBy: string | null;
  decidedByName: string | null;
  decidedVia: DecidedVia | null;
  decidedAt: Date | null;
}

export type Refusal =
  | { reason: "not_permitted"; message: string }
  | {
      reason: "already_decided";
      message: string;
      status: ApprovalStatus;
      by: string | null;
      at: Date | null;
      via: DecidedVia | null;
      /** The decision was this person's own (a repeated click). */
      mine: boolean;
    }
  | { reason: "run_stopped"; message: string }
  | { reason: "deadline_passed"; message: string }
  | { reason: "content_changed"; message: string }
  /** An edit that cannot be saved: nothing to edit, or what was typed is not an email (decisions never see it). */
  | { reason: "not_editable"; message: string };

const rank: Record<Role, number> = { viewer: 0, approver: 1, editor: 2, owner: 3 };

/** May this person decide? Owners always may; others if named, or holding the role asked for (or a higher one). */
export function mayDecide(approvers: Approvers, decider: Pick<Decider, "email" | "role">): boolean {
  if (decider.role === null || decider.role === "viewer") return false;
  if (decider.role === "owner") return true;
  if (approvers.users.includes(decider.email.toLowerCase())) return true;
  return approvers.role !== undefined && rank[decider.role] >= rank[approvers.role];
}

export function judge(a: ApprovalView, decider: Decider, digest: string): Refusal | null {
  if (decider.role === null) return { reason: "not_permitted", message: "you are not a member of this organisation" };
  if (a.status !== "pending") {
    // The same person clicking again (a double click, a second channel) reads back their own decision.
    const mine = a.decidedBy === decider.userId && a.decidedVia !== "deadline";
    const message = mine ? describeOwnDecision(a) : describeOutcome(a);
    return { reason: "already_decided", message, status: a.status, by: a.decidedByName, at: a.decidedAt, via: a.decidedVia, mine };
  }
  if (a.runStatus !== "running" || a.cancelRequested) {
    return { reason: "run_stopped", message: a.cancelRequested ? "the run was cancelled" : `the run is ${a.runStatus}` };
  }
  if (a.pastDeadline) return { reason: "deadline_passed", message: "the deadline passed before this decision" };
  if (digest !== a.digest) return { reason: "content_changed", message: "the content changed since you saw it: review it again" };
  if (!mayDecide(a.approvers, decider)) return { reason: "not_permitted", message: "you may not decide this approval" };
  return null;
}

const verbs: Record<ApprovalStatus, string> = {
  pending: "pending",
  approved: "approved",
  rejected: "rejected",
  escalated: "escalated",
  expired: "expired",
  cancelled: "cancelled",
};

/** "10:02 UTC on 2026-12-08": when something happened, as a read-back says it. */
export const readBackTime = (at: Date) => `${at.toISOString().slice(11, 16)} UTC on ${at.toISOString().slice(0, 10)}`;

/** "you approved this at 11:40 UTC on 2026-12-01 (inbox)": what a repeated click by the decider reads back. */
export function describeOwnDecision(a: Pick<ApprovalView, "status" | "decidedAt" | "decidedVia">): string {
  const at = a.decidedAt ? ` at ${a.decidedAt.toISOString().slice(11, 16)} UTC on ${a.decidedAt.toISOString().slice(0, 10)}` : "";
  return `you ${verbs[a.status]} this${at}${a.decidedVia ? ` (${a.decidedVia})` : ""}`;
}

/** "approved by Sam at 11:40 UTC" / "expired at ..." / "cancelled (the run stopped)". */
export function describeOutcome(a: Pick<ApprovalView, "status" | "decidedByName" | "decidedAt" | "decidedVia">): string {
  if (a.status === "pending") return "pending";
  const at = a.decidedAt ? ` at ${a.decidedAt.toISOString().slice(11, 16)} UTC on ${a.decidedAt.toISOString().slice(0, 10)}` : "";
  if (a.decidedVia === "deadline" && (a.status === "approved" || a.status === "rejected")) return `${verbs[a.status]} by default when the deadline passed${at}`;
  if (a.status === "escalated") return `escalated when the deadline passed${at}`;
  if (a.status === "expired") return `expired with no decision${at}`;
  if (a.status === "cancelled") return `closed: the run stopped${at}`;
  return `${verbs[a.status]} by ${a.decidedByName ?? "someone"}${a.decidedVia ? ` (${a.decidedVia})` : ""}${at}`;
}


/** What a refused click reads back: "Already recorded: you approved this at ..." or "Not recorded: <why>". */
export function readBack(refusal: Refusal): string {
  return refusal.reason === "already_decided" && refusal.mine ? `Already recorded: ${refusal.message}` : `Not recorded: ${refusal.message}`;
}
