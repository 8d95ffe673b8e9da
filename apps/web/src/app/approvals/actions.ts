"use server";

import { HoldfastError } from "@holdfast/core/base";
import { decideApproval, readBack } from "@holdfast/core/people";
import { redirect, unstable_rethrow } from "next/navigation";
import { z } from "zod";
import { db } from "../../server/db";
import { failureFor } from "../../server/failure";
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
    ok = result.ok;
    message = result.ok ? `${result.status === "approved" ? "Approved" : "Rejected"}: the run goes on.` : `${readBack(result.refusal)}.`;
  } catch (error) {
    unstable_rethrow(error);
    message = error instanceof HoldfastError ? `Not recorded: ${error.message}.` : `Not recorded: ${failureFor(error, "approval decision").message}`;
  }
  redirect(`/approvals?${ok ? "done" : "error"}=${encodeURIComponent(message)}`);
}
