"use server";

import { HoldfastError } from "@holdfast/core/base";
import { decideApproval, editApproval, editLimits, type Refusal, readBack } from "@holdfast/core/people";
import { redirect, unstable_rethrow } from "next/navigation";
import { z } from "zod";
import { db } from "../../server/db";
import { formFailureSentence } from "../../server/failure";
import { requireUser } from "../../server/session";

const form = z.object({
  approvalId: z.string().regex(/^apr_[0-9a-f]{32}$/),
  orgId: z.string().regex(/^org_[0-9a-f]{32}$/),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  decision: z.enum(["approved", "rejected"]),
});

/**
 * Approve or reject from the inbox: the same rules as a Slack button (decideApproval), bound to the digest of the
 * content this page showed. The outcome comes back to the page as a message.
 */
export async function decideAction(data: FormData): Promise<void> {
  const user = await requireUser("/approvals");
  const parsed = form.safeParse(Object.fromEntries(["approvalId", "orgId", "digest", "decision"].map((k) => [k, data.get(k)])));
  if (!parsed.success) redirect(`/approvals?error=${encodeURIComponent("That form was not valid; reload the page and try again.")}`);
  const { approvalId, orgId, digest, decision } = parsed.data;
  // Only an organisation the user belongs to; decideApproval checks the role again under the approval's lock.
  if (!user.memberships.some((m) => m.orgId === orgId)) redirect(`/approvals?error=${encodeURIComponent("You may not decide this approval.")}`);
  let message: string;
  let ok = false;
  try {
    const result = await decideApproval(db, { orgId, approvalId, decision, digest, via: "inbox", actor: { userId: user.id } });
    ok = result.ok || repeatOfMine(result.refusal);
    message = result.ok ? `${result.status === "approved" ? "Approved" : "Rejected"}: the run goes on.` : `${readBack(result.refusal)}.`;
  } catch (error) {
    unstable_rethrow(error);
    message = error instanceof HoldfastError ? `Not recorded: ${error.message}.` : `Not recorded: ${formFailureSentence(error, "approval decision")}`;
  }
  redirect(`/approvals?${ok ? "done" : "error"}=${encodeURIComponent(message)}`);
}

/** A repeated click of the person's own decision: harmless, so it reads back as done, not as an error. */
function repeatOfMine(refusal: Refusal | undefined): boolean {
  return refusal?.reason === "already_decided" && refusal.mine === true;
}

const editForm = z.object({
  approvalId: z.string().regex(/^apr_[0-9a-f]{32}$/),
  orgId: z.string().regex(/^org_[0-9a-f]{32}$/),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  // A little over the limits: the words for a too-long subject or text come from core (editProblem).
  subject: z.string().max(editLimits.subject * 2),
  text: z.string().max(editLimits.text * 2),
  after: z.enum(["approve", "save"]),
});

/**
 * Edit before approving, from the inbox: the edit (and, with "Save and approve", the approval) in one transaction
 * under the approval's lock (core editApproval), bound to the digest of the content this page showed, so a repeated
 * submit reads back what happened and changes nothing.
 */
export async function editAction(data: FormData): Promise<void> {
  const user = await requireUser("/approvals");
  const parsed = editForm.safeParse(Object.fromEntries(["approvalId", "orgId", "digest", "subject", "text", "after"].map((k) => [k, data.get(k)])));
  if (!parsed.success) redirect(`/approvals?error=${encodeURIComponent("That form was not valid; reload the page and try again.")}`);
  const { approvalId, orgId, digest, subject, text, after } = parsed.data;
  if (!user.memberships.some((m) => m.orgId === orgId)) redirect(`/approvals?error=${encodeURIComponent("You may not edit this approval.")}`);
  let message: string;
  let ok = false;
  try {
    const result = await editApproval(db, { orgId, approvalId, digest, subject, text, via: "inbox", actor: { userId: user.id }, approve: after === "approve" });
    ok = result.ok || repeatOfMine(result.refusal);
    message = !result.ok
      ? `${readBack(result.refusal)}.`
      : result.status === "approved"
        ? result.edit
          ? "Saved your edit and approved: the email goes out exactly as you edited it."
          : "Approved as shown (you changed nothing): the run goes on."
        : result.edit
          ? "Saved your edit. It still waits for a decision: approve it when you are ready."
          : "Nothing was saved: the subject and text are as they were.";
  } catch (error) {
    unstable_rethrow(error);
    message = error instanceof HoldfastError ? `Not recorded: ${error.message}.` : `Not recorded: ${formFailureSentence(error, "approval edit")}`;
  }
  redirect(`/approvals?${ok ? "done" : "error"}=${encodeURIComponent(message)}`);
}
