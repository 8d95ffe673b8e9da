import type { Db, Tx } from "@holdfast/db";
import { type ApprovalEditRow, approvalEditsInsert } from "../../store/sql/approval-edits";
import { type ApprovalRow, approvalsApplyEdit } from "../../store/sql/approvals";
import { outboxInsert } from "../../store/sql/outbox";
import { runEventsInsert } from "../../store/sql/run-events";
import { type DecisionActor, judgeNow, type LockedApproval, recordDecision, refused, withApprovalLock } from "./decide";
import { contentDigest } from "./digest";
import { type EmailDraft, emailDigestOf, emailReviewText, partsOf } from "./email";
import type { Decider, Refusal } from "./judge";

/**
 * Edit before approving: an approver changes the subject and text of the email an approval shows, and (usually)
 * approves it in the same action. One transaction under the approval's lock (withApprovalLock, as a decision): the
 * edit is judged exactly as a decision bound to the digest the editor saw (a member who may decide, still pending,
 * run going, deadline not passed, content unchanged since shown), then the approval's content, digest, email digest
 * and draft become the edited ones, the edit's row and its `approval.edited` timeline row are written, and with
 * `approve` the decision binds the edited content's digest. A repeated submit carries the digest it was shown, so it
 * reads back what happened (already decided, or edited since) and changes nothing.
 */
export interface EditRequest {
  orgId: string;
  approvalId: string;
  /** The digest of the content the editor was shown (the inbox form's, the Slack modal's token). */
  digest: string;
  subject: string;
  text: string;
  via: "inbox" | "slack";
  actor: DecisionActor;
  /** Save and approve (true), or save the edit only and leave the approval pending for anyone to decide. */
  approve: boolean;
}

type Ref = Pick<ApprovalRow, "id" | "runId" | "stepId">;
export type EditResult =
  | { ok: true; approval: Ref; status: "approved" | "pending"; by: string; edit: ApprovalEditRow | null; digest: string }
  | { ok: false; refusal: Refusal; approval: Ref };

/**
 * Longest subject and text an edit may save (a subject is one line). The text's limit keeps the inbox's form post
 * (every character up to 4 bytes) within the web's 64 KB for a form.
 */
export const editLimits = { subject: 300, text: 15_000 } as const;

/** What is wrong with the typed subject and text, in words; null when they can be sent. */
export function editProblem(subject: string, text: string): string | null {
  if (subject.trim() === "") return "the subject is empty: write a subject";
  if (/[\r\n]/.test(subject)) return "the subject must be one line";
  if (subject.length > editLimits.subject) return `the subject is longer than ${editLimits.subject} characters`;
  if ((subject + text).includes("\u0000")) return "the subject or text holds a NUL character: remove it";
  if (text.trim() === "") return "the text is empty: write the email's text";
  if (text.length > editLimits.text) return `the text is longer than ${editLimits.text.toLocaleString("en")} characters`;
  return null;
}

export async function editApproval(db: Db, req: EditRequest): Promise<EditResult> {
  const lockReq = { ...req, decision: "approved" as const, action: "edit" as const };
  return withApprovalLock(db, lockReq, async (tx, a, decider) => {
    const refusal = (await judgeNow(tx, a, decider, req.digest)) ?? notEditable(a, req);
    if (refusal) return refused(tx, a, decider, lockReq, refusal);
    const draft = a.emailDraft as EmailDraft;
    const text = req.text.replace(/\r\n/g, "\n");
    // Saved as shown: no edit (an HTML version stays), and "Save and approve" approves what was shown.
    const unchanged = draft.subject === req.subject && draft.text === text;
    const edit = unchanged ? null : await applyEdit(tx, a, decider, { ...req, text }, draft);
    if (!req.approve) {
      const digest = edit?.digestAfter ?? a.digest;
      return { ok: true as const, approval: ref(a), status: "pending" as const, by: decider.name, edit, digest };
    }
    // The decision binds the content as it now is: the edited one (applyEdit updated the locked row).
    const decided = await recordDecision(tx, edit ? { ...a, digest: edit.digestAfter } : a, decider, { orgId: req.orgId, decision: "approved", via: req.via });
    return { ...decided, status: "approved" as const, edit, digest: edit?.digestAfter ?? a.digest };
  });
}

const ref = (a: ApprovalRow): Ref => ({ id: a.id, runId: a.runId, stepId: a.stepId });

/** An approval whose email cannot be edited, or an edit that is not an email: why, in words. */
function notEditable(a: LockedApproval, req: EditRequest): Refusal | null {
  const no = (message: string): Refusal => ({ reason: "not_editable", message });
  if (!a.emailDraft || !a.emailDigest) return no("this approval shows no email to edit");
  if (a.emailDigest.revised) return no("the approval's content was changed after it showed the email, so the email cannot be edited here");
  if (!a.content.endsWith(emailReviewText(partsOf(a.emailDraft)))) return no("the approval's content no longer ends with its email");
  const problem = editProblem(req.subject, req.text);
  return problem ? no(problem) : null;
}

/** The edit: the approval's content, digest, email digest and draft become the edited ones, recorded with who and how. */
async function applyEdit(tx: Tx, a: LockedApproval, decider: Decider, req: EditRequest, draft: EmailDraft): Promise<ApprovalEditRow> {
  const edited: EmailDraft = { to: draft.to, subject: req.subject, text: req.text, html: null };
  // The approval's own words (before the email) stay; the email part is the edited email, shown as any email is.
  const intro = a.content.slice(0, a.content.length - emailReviewText(partsOf(draft)).length);
  const content = intro + emailReviewText(partsOf(edited));
  const digest = contentDigest(a.title, content);
  const node = (a.emailDigest as NonNullable<LockedApproval["emailDigest"]>).node;
  const { notify } = await approvalsApplyEdit(tx, a.orgId, a.id, { content, digest, emailDigest: emailDigestOf(node, partsOf(edited)), emailDraft: edited });
  const edit = await approvalEditsInsert(tx, {
    orgId: a.orgId,
    approvalId: a.id,
    originalSubject: draft.subject,
    originalText: draft.text,
    editedSubject: edited.subject,
    editedText: req.text,
    hadHtml: draft.html !== null,
    editedBy: decider.userId,
    editedByName: decider.name,
    via: req.via,
    digestBefore: a.digest,
    digestAfter: digest,
  });
  await runEventsInsert(tx, [
    {
      orgId: a.orgId,
      runId: a.runId,
      stepId: a.stepId,
      nodeId: a.nodeId,
      type: "approval.edited",
      worker: `${req.via}:${decider.userId}`,
      data: {
        approvalId: a.id,
        editId: edit.id,
        by: decider.name,
        userId: decider.userId,
        via: req.via,
        subjectChanged: draft.subject !== edited.subject,
        textChanged: draft.text !== edited.text,
        htmlDropped: draft.html !== null,
        from: a.digest.slice(0, 12),
        to: digest.slice(0, 12),
      },
    },
  ]);
  // Saved without approving: the Slack message shows the edited email, its buttons bound to the new digest. (With
  // approve, the decision's own update shows the outcome.)
  if (notify && !req.approve) await outboxInsert(tx, [{ orgId: a.orgId, runId: a.runId, topic: "approval.notify", payload: { orgId: a.orgId, approvalId: a.id } }]);
  return edit;
}
