import { baseEnv, inboundEmailDomain, laneNames, lanes, loadEnv } from "@holdfast/core";
import { z } from "zod";

const raw = loadEnv(
  baseEnv.extend({
    LANE: z.enum(laneNames),
    /** Overrides of the lane catalog for this deployment. */
    LANE_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).optional(),
    LANE_LEASE_MS: z.coerce.number().int().min(200).max(3_600_000).optional(),
    LANE_HEARTBEAT_MS: z.coerce.number().int().min(50).max(1_200_000).optional(),
    /** On SIGTERM: how long steps in hand may take to finish before their leases are released. */
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
    /** The web app's public address (the human lane links approvals' Slack messages to their runs). */
    HOLDFAST_PUBLIC_URL: z.string().url().optional(),
    /** How long one attempt at an approval's Slack post holds it before another may look it up and take over. */
    APPROVAL_NOTIFY_LEASE_SECONDS: z.coerce.number().min(0.1).max(3_600).default(30),
    /**
     * Local dispatch: a settle that schedules the next step on this lane claims it for this worker in the same
     * commit, and the slot runs it next (no queue hop). The number of steps one slot runs in a row before handing
     * back to the queue (fairness between runs); 0 turns local dispatch off.
     */
    LOCAL_DISPATCH_MAX_CHAIN: z.coerce.number().int().min(0).max(10_000).default(100),
    /**
     * Group commit of settles: settles that finish while SETTLE_BATCH_PARALLEL batches are in flight (or while one is
     * and fewer than SETTLE_BATCH_CROWD wait) wait for one to return and then go together, up to SETTLE_BATCH_MAX in one statement and one commit, each still fenced by its
     * own attempt. A quiet worker settles at once, alone. 1 turns batching off (one statement a settle). At most 60:
     * each item settles in its own subtransaction, and a transaction with more than 64 subtransactions slows every
     * other backend's snapshots (PostgreSQL's subtransaction cache overflows).
     */
    SETTLE_BATCH_MAX: z.coerce.number().int().min(1).max(60).default(32),
    /**
     * Batches in flight at once. 1 (the default since 2026-12-03): every settle that finishes while a batch is in
     * flight goes with the next, 0.28 -> 0.21 commits a step and about a tenth more steps a second in the bench's http
     * rows (docs/operations.md). More lets a settle go sooner beside a batch in flight (SETTLE_BATCH_CROWD).
     */
    SETTLE_BATCH_PARALLEL: z.coerce.number().int().min(1).max(64).default(1),
    /**
     * With SETTLE_BATCH_PARALLEL above 1: while one batch is in flight, another opens only once this many settles
     * wait; fewer wait for the batch in flight and go together after it. 1: a second batch opens as soon as one
     * settle waits.
     */
    SETTLE_BATCH_CROWD: z.coerce.number().int().min(1).max(60).default(4),
    /**
     * Take a run's first steps straight from the outbox on the lane's NOTIFY (no relay, no Redis hop) while a slot is
     * free; the relay delivers what no worker took after RELAY_STEP_READY_GRACE_MS. Off: every wake-up comes
     * through the queue. Redis mode only (WAKEUPS=poll takes everything from the outbox already).
     */
    LISTEN_DISPATCH: z.enum(["on", "off"]).default("on"),
    /**
     * The domain replies reach this deployment at: every email sent gets Reply-To reply+<token>@<domain>
     * (signals/routing.ts, which reads it when sending). Checked here so a bad value stops the worker at start.
     */
    INBOUND_EMAIL_DOMAIN: z
      .string()
      .optional()
      .superRefine((v, ctx) => {
        try {
          inboundEmailDomain({ INBOUND_EMAIL_DOMAIN: v });
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
        }
      }),
  }),
);

const base = lanes[raw.LANE];
const leaseMs = raw.LANE_LEASE_MS ?? base.leaseMs;
export const lane = {
  ...base,
  concurrency: raw.LANE_CONCURRENCY ?? base.concurrency,
  leaseMs,
  heartbeatMs: raw.LANE_HEARTBEAT_MS ?? (raw.LANE_LEASE_MS ? Math.round(leaseMs / 3) : base.heartbeatMs),
};
if (lane.heartbeatMs >= lane.leaseMs) {
  process.stderr.write(`invalid environment:\n  LANE_HEARTBEAT_MS must be shorter than the lease (${lane.leaseMs} ms)\n`);
  process.exit(78);
}
export const env = raw;
