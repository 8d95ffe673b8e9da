import { baseEnv, loadEnv, systemMailEnv } from "@holdfast/core";
import { z } from "zod";

export const env = loadEnv(
  baseEnv.extend({
    SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(2_000),
    /** A ready step or a quiet run older than this is assumed to have lost its wake-up. */
    SWEEP_STALE_SECONDS: z.coerce.number().min(0.1).max(86_400).default(30),
    SWEEP_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
    LEADER_LEASE_MS: z.coerce.number().int().min(200).max(600_000).default(10_000),
    OUTBOX_RETENTION_SECONDS: z.coerce.number().int().min(60).default(86_400),
    /** An approval's Slack post or update not finished within this many seconds is woken again (as the human lane's lease). */
    APPROVAL_NOTIFY_LEASE_SECONDS: z.coerce.number().min(0.1).max(3_600).default(30),
    /** The fair due sweep: organisations per batch, timers per organisation, timers per batch, batches per tick. */
    TIMER_SWEEP_ORGS: z.coerce.number().int().min(1).max(1_000).default(20),
    TIMER_SWEEP_PER_ORG: z.coerce.number().int().min(1).max(10_000).default(50),
    TIMER_SWEEP_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
    TIMER_SWEEP_MAX_BATCHES: z.coerce.number().int().min(1).max(1_000).default(20),
    /** The connection health probe: each connection is logged into at most this often (0 = off). */
    CONNECTION_PROBE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  }).extend(systemMailEnv.shape),
);
