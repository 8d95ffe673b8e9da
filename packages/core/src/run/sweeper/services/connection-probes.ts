import { z } from "zod";
import { probeConnections } from "../../../providers/connections/probe";
import { connectionsSmtpStale } from "../../../store/sql/connections";
import { defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface ConnectionProbesResult {
  /** Connections logged into (without sending) this run, by what the login found. */
  ok: number;
  needsReconnect: number;
  unreachable: number;
}

/**
 * Connection probes: each SMTP connection not checked for `staleSeconds` is logged into without sending, oldest
 * first, a few per run so a slow mail server never holds up the sweep; a refused login marks it needs_reconnect
 * (its steps park), a login that works again resumes what parked on it. `staleSeconds` 0 turns it off.
 */
export const connectionProbes = defineService({
  name: "connection-probes",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_CONNECTION_PROBES_INTERVAL_MS: setting.intervalMs.optional(),
      SWEEP_CONNECTION_PROBES_BATCH: z.coerce.number().int().min(1).max(100).default(5).describe("Connections logged into per run"),
      CONNECTION_PROBE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300).describe("How often the sweeper logs into each SMTP connection to find broken ones (seconds; 0 = off)"),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_CONNECTION_PROBES_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_CONNECTION_PROBES_BATCH,
      staleSeconds: e.CONNECTION_PROBE_SECONDS,
    })),
  // The look reads which are due; the logins happen after it, outside any transaction.
  look: async (tx, s) => (s.staleSeconds === 0 ? [] : connectionsSmtpStale(tx, s.staleSeconds, s.batch)),
  async act(ctx, _s, stale): Promise<ConnectionProbesResult> {
    const counts = await probeConnections(ctx.db, stale);
    return { ok: counts.ok, needsReconnect: counts.needs_reconnect, unreachable: counts.unreachable };
  },
  report(r, log) {
    if (r.needsReconnect || r.unreachable) log.warn(r, "connection probe found broken connections");
  },
});
