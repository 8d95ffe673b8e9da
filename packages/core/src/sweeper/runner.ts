import { type Db, inTx } from "@holdfast/db";
import { crashpoint } from "../crash";
import type { Logger } from "../log";
import type { OutageReporter } from "../ops/outage";
import { loop, sleep } from "../process";
import { leaderLeasesAcquireOrRenew, leaderLeasesRelease } from "../sql/leader-leases";
import type { SweepContext, SweepService } from "./service";

export const sweeperLeaderName = "sweeper";

/** True while this process is the elected sweeper; a crashed leader's lease lapses and a standby takes over. */
export function acquireLeadership(db: Db, owner: string, leaseMs: number): Promise<boolean> {
  return inTx(db, (tx) => leaderLeasesAcquireOrRenew(tx, sweeperLeaderName, owner, leaseMs));
}

/**
 * The sweeper process's loop: every tick it renews (or tries to take) the leader lease and, while it leads, runs
 * each service whose interval has passed. A service that throws is logged and the others go on; a lost database
 * connection goes to `outages` (said once per outage). A full batch runs its service again after a short breath; a
 * service that expects more work soon (nextInMs) runs again then, before its interval.
 * Resolves once `signal` aborts, after releasing the lease if it held it.
 */
export async function runSweeper(o: {
  ctx: SweepContext;
  services: SweepService[];
  owner: string;
  leaseMs: number;
  log: Logger;
  signal: AbortSignal;
  outages?: OutageReporter;
}): Promise<void> {
  // Renew well inside the lease, and look at least as often as the most frequent service wants.
  const tickMs = Math.min(Math.floor(o.leaseMs / 3), ...o.services.map((s) => s.intervalMs));
  const dueAt = new Map<string, number>();
  let leading = false;
  await loop({
    log: o.log,
    signal: o.signal,
    idleMs: tickMs,
    ...(o.outages ? { outages: o.outages } : {}),
    once: async () => {
      const lead = await acquireLeadership(o.ctx.db, o.owner, o.leaseMs);
      if (lead !== leading) o.log.info({ worker: o.owner }, lead ? "became sweeper leader" : "lost sweeper leadership");
      leading = lead;
      if (!lead) return false;
      // A few ms of slack: the idle timer may end a hair before the interval measured from the last start.
      const now = performance.now() + 10;
      let ran = 0;
      let again = false;
      let soon = false;
      for (const s of o.services) {
        if (o.signal.aborted) break;
        if ((dueAt.get(s.name) ?? 0) > now) continue;
        const started = performance.now();
        let full = false;
        let next = s.intervalMs;
        try {
          const result = await s.runOnce(o.ctx);
          ran++;
          s.report(result, o.log);
          full = s.full(result);
          next = Math.min(s.intervalMs, Math.max(10, s.nextInMs?.(result) ?? s.intervalMs));
        } catch (error) {
          if (!o.outages?.report(error)) o.log.error({ err: error, service: s.name }, `sweep service ${s.name} failed; the others go on`);
        }
        // A run asked for sooner than its interval still leaves a 50 ms breath after it ends (a pass that took longer
        // than it asked for does not go again back to back).
        dueAt.set(s.name, full ? 0 : next < s.intervalMs ? Math.max(started + next, performance.now() + 50) : started + next);
        again ||= full;
        soon ||= !full && next < s.intervalMs;
      }
      if (ran) crashpoint("sweeper.after_commit");
      if (again) {
        await sleep(50, o.signal);
        return true;
      }
      // A service that asked to run again before its interval (nextInMs) is woken for it, not at the next tick; without
      // one, the loop naps a tick as it always has.
      if (soon) {
        const soonest = Math.min(...o.services.map((s) => dueAt.get(s.name) ?? 0)) - performance.now();
        if (soonest < tickMs) {
          await sleep(Math.max(0, soonest), o.signal);
          return true;
        }
      }
      return false;
    },
  });
  if (leading) await inTx(o.ctx.db, (tx) => leaderLeasesRelease(tx, sweeperLeaderName, o.owner));
}
