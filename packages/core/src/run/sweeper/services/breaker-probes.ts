import { z } from "zod";
import { breakersWakeProbes } from "../../../store/sql/connection-limits";
import { defaultIntervalMs, defineService, setting, sweepSharedEnv } from "../service";

export interface BreakerProbesResult {
  /** Parked steps woken to be the half-open probe of their connection's breaker (one per connection). */
  woken: number;
}

/**
 * Breaker probes: for each connection whose breaker has been open past its cool-down (the connection's
 * `limits.breaker.coolDownMs`, by the database clock) while steps are parked on it, one parked step is woken to be
 * the half-open probe (at most 100 connections per run, the statement's bound).
 */
export const breakerProbes = defineService({
  name: "breaker-probes",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_BREAKER_PROBES_INTERVAL_MS: setting.intervalMs.optional(),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_BREAKER_PROBES_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
    })),
  async look(tx, _s, ctx): Promise<BreakerProbesResult> {
    return { woken: await breakersWakeProbes(tx, ctx.actor) };
  },
  report(r, log) {
    if (r.woken) log.info({ probes: r.woken }, "woke breaker probes");
  },
});
