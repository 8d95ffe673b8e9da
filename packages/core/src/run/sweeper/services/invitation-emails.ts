import { z } from "zod";
import { claimInvitationEmails, type InvitationSendResult, sendClaimedInvitations } from "../../../people/auth/invitation-mail";
import { defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

/** Invitation emails sent, failed for good (with why, on the owner's list), or to retry. */
export type InvitationEmailsResult = InvitationSendResult;

/**
 * Invitation emails: each invitation made while the deployment has a system mailbox owes one email to the invited
 * address (people/auth/invitation-mail.ts). The look claims a batch under a lease of `leaseSeconds` and makes each one's
 * link in the claim; they are sent after it commits, outside any transaction, and tried up to `maxAttempts` times.
 */
export const invitationEmails = defineService({
  name: "invitation-emails",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_INVITATION_EMAILS_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_INVITATION_EMAILS_BATCH: z.coerce.number().int().min(1).max(1_000).default(20).describe("Invitations emailed per run"),
      SWEEP_INVITATION_EMAILS_LEASE_SECONDS: z.coerce.number().int().min(5).max(3_600).default(60).describe("How long one attempt at an invitation's email holds it (seconds)"),
      SWEEP_INVITATION_EMAILS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5).describe("Attempts at an invitation's email before it is marked failed"),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_INVITATION_EMAILS_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_INVITATION_EMAILS_BATCH,
      leaseSeconds: e.SWEEP_INVITATION_EMAILS_LEASE_SECONDS,
      maxAttempts: e.SWEEP_INVITATION_EMAILS_MAX_ATTEMPTS,
    })),
  look: (tx, s) => claimInvitationEmails(tx, s.batch, s.leaseSeconds, s.maxAttempts),
  act(ctx, s, owed): Promise<InvitationEmailsResult> {
    return sendClaimedInvitations(ctx.db, ctx.systemMail, owed, { maxAttempts: s.maxAttempts, ...(ctx.egress ? { egress: ctx.egress } : {}) });
  },
  report(r, log) {
    if (r.sent || r.failed || r.retrying) log.info(r, "invitation emails");
  },
});
