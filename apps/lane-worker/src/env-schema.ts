import { baseEnv, laneNames } from "@holdfast/core/base";
import { inboundEmailDomain } from "@holdfast/core/people";
import { z } from "zod";

/** A lane worker's settings (docs/operations.md "Settings" and .env.example are generated from these: `pnpm docs:settings`). */
export const laneWorkerEnv = baseEnv.extend({
  LANE: z.enum(laneNames).describe(`The lane this worker serves (one process per lane): ${laneNames.join(", ")}`),
  LANE_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).optional().describe("Slots (steps at once); unset = the lane catalog's value"),
  LANE_LEASE_MS: z.coerce.number().int().min(200).max(3_600_000).optional().describe("A step's lease (ms); unset = the lane catalog's value"),
  LANE_HEARTBEAT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(1_200_000)
    .optional()
    .describe("Lease renewal interval (ms); unset = the catalog's, or a third of LANE_LEASE_MS when that is set"),
  SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(10_000)
    .describe("On SIGTERM: how long steps in hand may take to finish before their leases are released (ms)"),
  // The web app's public address (described in the web's schema): approvals' Slack messages link to their runs, and
  // real emails carry a one-click unsubscribe link to it (people/unsubscribe/token.ts reads it when sending; unset = none).
  HOLDFAST_PUBLIC_URL: z.string().url().optional(),
  APPROVAL_NOTIFY_LEASE_SECONDS: z.coerce
    .number()
    .min(0.1)
    .max(3_600)
    .default(30)
    .describe("The human lane: how long one attempt at an approval's Slack post holds it (the sweeper uses the same value)"),
  // A settle that schedules the next step on this lane claims it for this worker in the same commit, and the slot runs
  // it next (no queue hop); the limit keeps runs fair.
  LOCAL_DISPATCH_MAX_CHAIN: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(100)
    .describe("Steps one slot runs in a row when a settle claims the next step on its lane (0 = no local dispatch)"),
  // Settles that finish while SETTLE_BATCH_PARALLEL batches are in flight (or while one is and fewer than
  // SETTLE_BATCH_CROWD wait) go together, each still fenced by its own attempt. At most 60: each item settles in its own
  // subtransaction, and more than 64 subtransactions overflow PostgreSQL's subtransaction cache.
  SETTLE_BATCH_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(60)
    .default(32)
    .describe("Group commit: settles that finish while batches are in flight go together, up to this many in one commit (1 = off)"),
  SETTLE_BATCH_PARALLEL: z.coerce.number().int().min(1).max(64).default(1).describe("Settle batches in flight at once"),
  SETTLE_BATCH_CROWD: z.coerce
    .number()
    .int()
    .min(1)
    .max(60)
    .default(4)
    .describe("With SETTLE_BATCH_PARALLEL above 1: settles waiting before another batch opens beside the one in flight"),
  // The relay delivers what no worker took after RELAY_STEP_READY_GRACE_MS. Redis mode only (WAKEUPS=poll takes
  // everything from the outbox already).
  LISTEN_DISPATCH: z
    .enum(["on", "off"])
    .default("on")
    .describe("Take a run's first steps straight from the outbox on the lane's NOTIFY while a slot is free (off = through the queue)"),
  // people/signals/routing.ts reads it when sending; checked here so a bad value stops the worker at start.
  INBOUND_EMAIL_DOMAIN: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      try {
        inboundEmailDomain({ INBOUND_EMAIL_DOMAIN: v });
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
      }
    })
    .describe("The domain replies reach this deployment at: every email sent gets Reply-To reply+<token>@<domain>; unset = no Reply-To routing"),
});
