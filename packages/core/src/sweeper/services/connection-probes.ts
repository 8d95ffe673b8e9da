import { z } from "zod";
import { probeStaleConnections } from "../../connections/probe";
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
      SWEEP_CONNECTION_PROBES_BATCH: z.coerce.number().int().min(1).max(100).default(5),
      CONNECTION_PROBE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_CONNECTION_PROBES_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      batch: e.SWEEP_CONNECTION_PROBES_BATCH,
      staleSeconds: e.CONNECTION_PROBE_SECONDS,
    })),
  async runOnce(ctx, s): Promise<ConnectionProbesResult> {
    if (s.staleSeconds === 0) return { ok: 0, needsReconnect: 0, unreachable: 0 };
    const counts = await probeStaleConnections(ctx.db, s.staleSeconds, s.batch);
    return { ok: counts.ok, needsReconnect: counts.needs_reconnect, unreachable: counts.unreachable };
  },
  report(r, log) {
    if (r.needsReconnect || r.unreachable) log.warn(r, "connection probe found broken connections");
  },
});
