import { type ApprovalRow, approvalsList } from "@holdfast/core/store";
import { mayDecide, type SessionUser } from "@holdfast/core/people";
import type { Db } from "@holdfast/db";

export interface InboxItem extends ApprovalRow {
  orgSlug: string;
  orgName: string;
}

/**
 * The approvals inbox of one user: pending approvals they may decide now (soonest deadline first) across their
 * organisations, and the latest decided ones of those organisations. Every query is scoped by an organisation the
 * user is a member of.
 */
export async function inboxFor(db: Db, user: SessionUser): Promise<{ pending: InboxItem[]; decided: InboxItem[] }> {
  const pending: InboxItem[] = [];
  const decided: InboxItem[] = [];
  for (const m of user.memberships) {
    const org = { orgSlug: m.orgSlug, orgName: m.orgName };
    for (const a of await approvalsList(db, m.orgId, "pending")) {
      if (mayDecide(a.approvers, { email: user.email, role: m.role })) pending.push({ ...a, ...org });
    }
    for (const a of await approvalsList(db, m.orgId, "decided", 50)) decided.push({ ...a, ...org });
  }
  pending.sort((a, b) => a.deadlineAt.getTime() - b.deadlineAt.getTime());
  decided.sort((a, b) => (b.decidedAt?.getTime() ?? 0) - (a.decidedAt?.getTime() ?? 0));
  return { pending, decided: decided.slice(0, 50) };
}
