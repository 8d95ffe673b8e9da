import { type ApprovalEditRow, approvalEditsLatestOf, type ApprovalRow, approvalsList } from "@holdfast/core/store";
import { mayDecide, type SessionUser } from "@holdfast/core/people";
import type { Db } from "@holdfast/db";

export interface InboxItem extends ApprovalRow {
  orgSlug: string;
  orgName: string;
  /** The latest edit of a pending approval's email (the draft shown is the edited one), if any. */
  lastEdit?: ApprovalEditRow | undefined;
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
    const mine = (await approvalsList(db, m.orgId, "pending")).filter((a) => mayDecide(a.approvers, { email: user.email, role: m.role }));
    const edits = await approvalEditsLatestOf(db, m.orgId, mine.filter((a) => a.emailDraft).map((a) => a.id));
    for (const a of mine) pending.push({ ...a, ...org, lastEdit: edits.find((e) => e.approvalId === a.id) });
    for (const a of await approvalsList(db, m.orgId, "decided", 50)) decided.push({ ...a, ...org });
  }
  pending.sort((a, b) => a.deadlineAt.getTime() - b.deadlineAt.getTime());
  decided.sort((a, b) => (b.decidedAt?.getTime() ?? 0) - (a.decidedAt?.getTime() ?? 0));
  return { pending, decided: decided.slice(0, 50) };
}
