import type { Db } from "@holdfast/db";
import { listWords } from "../../versions/kinds/words";
import { approvalsOfEmail, type EmailApproval } from "../../store/sql/approvals";
import type { ClaimedStep } from "../../store/sql/steps";
import type { StepOutcome } from "../../base/outcome/outcome";
import { type EmailParts, emailChanges, partsOf } from "./email";

const statusWords: Record<EmailApproval["status"], string> = {
  pending: "still waiting for a decision",
  approved: "approved",
  rejected: "rejected",
  escalated: "passed on to other approvers",
  expired: "closed unanswered at its deadline",
  cancelled: "closed when the run stopped",
};

/**
 * At send time, for a send_email step whose email an approval approves (that approval's `email` names the step): the
 * latest such approval of the run must be approved, and the email about to go out must be the one it showed, part
 * for part. `send`: the email to send (also when no approval approves this email). An approver's edit is applied
 * here: the edited subject and text replace the rendered ones, the HTML version is dropped (an edit is plain text),
 * and the recipient stays the rendered one, which must be the one shown. Otherwise the step parks with the reason in
 * plain words and nothing is sent; a person may Resume it once the cause is gone, or stop the run.
 */
export async function approvedEmailCheck(
  db: Db,
  step: ClaimedStep,
  nodeId: string,
  rendered: EmailParts,
): Promise<{ send: EmailParts; edited: boolean } | { park: StepOutcome }> {
  const approval = await approvalsOfEmail(
    db,
    step.orgId,
    step.runSteps.map((s) => s.id),
    nodeId,
  );
  if (!approval) return { send: rendered, edited: false };
  const park = (code: string, reason: string, extra: Record<string, unknown> = {}) => ({
    park: { kind: "park", error: { code, message: reason, reason, approvalId: approval.id, approvalNode: approval.nodeId, ...extra } } satisfies StepOutcome,
  });
  if (approval.status !== "approved") {
    return park("email_not_approved", `The email was not approved: the approval "${approval.nodeId}" is ${statusWords[approval.status]}. Nothing was sent.`);
  }
  const approvedBy = approval.decidedVia === "deadline" ? "what was approved by default at the deadline" : `what ${approval.decidedByName ?? "the approver"} approved`;
  if (approval.emailDigest.revised) {
    return park(
      "email_differs",
      `The email differs from ${approvedBy}: the approval's content was changed after it showed this email, so the email itself was not approved. Nothing was sent.`,
    );
  }
  const email = approval.edited ? partsOf({ ...approval.edited, to: rendered.to, html: null }) : rendered;
  const changed = emailChanges(approval.emailDigest, email);
  if (changed.length === 0) return { send: email, edited: approval.edited !== null };
  return park("email_differs", `The email differs from ${approvedBy}: ${listWords(changed, "and")} changed since the approval showed it. Nothing was sent.`, {
    changed,
  });
}
