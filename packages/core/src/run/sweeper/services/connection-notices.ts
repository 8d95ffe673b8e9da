import { z } from "zod";
import { type NoticeSendResult, sendClaimedNotices } from "../../../providers/connections/notices";
import { noticesClaimOwedEmail } from "../../../store/sql/connection-notices";
import { defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

/** Notices emailed to owners (sent), marked skipped (no system mailbox, no owner), failed for good, or to retry. */
export type ConnectionNoticesResult = NoticeSendResult;

/**
 * Connection notices: the owners' email for each broken connection (one per break, `connection_notices`), through
 * the system mailbox (HOLDFAST_SYSTEM_SMTP_URL); each notice is claimed under a lease of `leaseSeconds` and tried
 * up to `maxAttempts` times. Without a mailbox the notices are marked skipped (the app's banner still shows them).
 */
export const connectionNotices = defineService({
  name: "connection-notices",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_CONNECTION_NOTICES_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_CONNECTION_NOTICES_BATCH: z.coerce.number().int().min(1).max(1_000).default(20).describe("Broken-connection notices emailed per run"),
      SWEEP_CONNECTION_NOTICES_LEASE_SECONDS: z.coerce.number().int().min(5).max(3_600).default(60).describe("How long one attempt at a notice's email holds it (seconds)"),
      SWEEP_CONNECTION_NOTICES_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5).describe("Attempts at a notice's email before it is marked failed"),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_CONNECTION_NOTICES_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_CONNECTION_NOTICES_BATCH,
      leaseSeconds: e.SWEEP_CONNECTION_NOTICES_LEASE_SECONDS,
      maxAttempts: e.SWEEP_CONNECTION_NOTICES_MAX_ATTEMPTS,
    })),
  // The look claims them under their lease; they are sent after it commits, outside any transaction.
  look: (tx, s) => noticesClaimOwedEmail(tx, s.batch, s.leaseSeconds, s.maxAttempts),
  act(ctx, s, claimed): Promise<ConnectionNoticesResult> {
    return sendClaimedNotices(ctx.db, ctx.systemMail, claimed, { maxAttempts: s.maxAttempts, ...(ctx.egress ? { egress: ctx.egress } : {}) });
  },
  report(r, log) {
    if (r.sent || r.failed || r.retrying) log.info(r, "connection notices emailed");
  },
});
