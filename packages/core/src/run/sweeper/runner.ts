import { type Db, inTx } from "@holdfast/db";
import { crashpoint } from "../../base/crash";
import type { Logger } from "../../base/log";
import type { OutageReporter } from "../ops/outage";
import { loop, sleep } from "../process";
import { leaderLeasesAcquireOrRenew, leaderLeasesRelease } from "../../store/sql/leader-leases";
import type { SweepContext, SweepService } from "./service";

export const sweeperLeaderName = "sweeper";

/**
 * The most of the time a service's look may take: after a look of T ms its service waits at least T / lookShare
 * before the next (its interval when that is longer). A scan that grows with the waiting work (the stalled runs and
 * the missing timers read every waiting run: 115 and 120 ms at 100,000 of them) then runs less often as it grows,
 * instead of taking a core at a million; a batch that came back full (work to repair) still runs again at once.
 * docs/performance.md, "The sweeper's scans with many runs waiting".
 */
export const lookShare = 0.02;

/** True while this process is the elected sweeper; a crashed leader's lease lapses and a standby takes over. */
export function acquireLeadership(db: Db, owner: string, leaseMs: number): Promise<boolean> {
  return inTx(db, (tx) => leaderLeasesAcquireOrRenew(tx, sweeperLeaderName, owner, leaseMs));
}

/**
 * The sweeper process's loops. One renews (or tries to take) the leader lease every third of it; while this process
 * leads, each group of services (`SweepService.loop`, "maintenance" unless it names its own) runs in a loop of its own,
 * each service whose interval has passed, one after another. The due sweep has its own group, so a maintenance scan
 * (the stalled runs, say, over every waiting run) never holds the firing of due timers back. A service that throws is
 * logged and the others go on; a lost database connection goes to `outages` (said once per outage). A full batch runs
 * its service again after a short breath; a service that expects more work soon (nextInMs) runs again then, before its
 * interval. Resolves once `signal` aborts, after releasing the lease if it held it.
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
  const renewMs = Math.floor(o.leaseMs / 3);
  const state = new Leadership();
  const renew = async () => {
    // A renewal that fails changes nothing here: what was held lapses with the time it was held for (holds()).
    const asked = performance.now();
    const lead = await acquireLeadership(o.ctx.db, o.owner, o.leaseMs);
    if (lead !== state.leading) o.log.info({ worker: o.owner }, lead ? "became sweeper leader" : "lost sweeper leadership");
    state.set(lead, asked + o.leaseMs);
  };
  // The first look before the groups start, so a leader runs its services at once rather than a tick later.
  await renew().catch((error) => {
    if (!o.outages?.report(error)) o.log.error({ err: error }, "taking the sweeper lease failed");
  });
  const groups = new Map<string, SweepService[]>();
  for (const s of o.services) groups.set(s.loop ?? "maintenance", [...(groups.get(s.loop ?? "maintenance") ?? []), s]);
  await Promise.all([
    loop({ log: o.log, signal: o.signal, idleMs: renewMs, ...(o.outages ? { outages: o.outages } : {}), once: async () => (await renew(), false) }),
    ...[...groups.values()].map((services) => runGroup(o, services, state, renewMs)),
  ]);
  if (state.leading) await inTx(o.ctx.db, (tx) => leaderLeasesRelease(tx, sweeperLeaderName, o.owner));
}

/** One group's loop: its services in turn, each when its time has come, only while the lease is held. */
function runGroup(
  o: { ctx: SweepContext; log: Logger; signal: AbortSignal; outages?: OutageReporter },
  services: SweepService[],
  state: Leadership,
  renewMs: number,
): Promise<void> {
  // Look at least as often as the most frequent service wants (and as the lease is renewed, to start soon after
  // taking it).
  const tickMs = Math.min(renewMs, ...services.map((s) => s.intervalMs));
  const dueAt = new Map<string, number>();
  return loop({
    log: o.log,
    signal: o.signal,
    idleMs: tickMs,
    ...(o.outages ? { outages: o.outages } : {}),
    once: async () => {
      if (!state.holds()) return false;
      // A few ms of slack: the idle timer may end a hair before the interval measured from the last start.
      const now = performance.now() + 10;
      let ran = 0;
      let again = false;
      let soon = false;
      const due = services.filter((s) => (dueAt.get(s.name) ?? 0) <= now);
      // The database part of every due service that has one, in one transaction: an idle tick is one commit.
      const looked = due.some((s) => s.split) && state.holds() ? await lookTogether(o.ctx, due) : new Map<string, Looked>();
      for (const s of due) {
        if (o.signal.aborted || !state.holds()) break;
        // Its interval counts from its own turn in the tick (its act; its look went with the others' at the start).
        const started = performance.now();
        let full = false;
        let next = s.intervalMs;
        try {
          const look = looked.get(s.name);
          if (s.split && !look) continue; // leadership ended before its look: not run this tick
          if (look && !look.ok) throw look.error;
          const result = look?.ok ? await (s.split as NonNullable<SweepService["split"]>).act(o.ctx, look.value) : await s.runOnce(o.ctx);
          ran++;
          s.report(result, o.log);
          full = s.full(result);
          next = Math.min(s.intervalMs, Math.max(10, s.nextInMs?.(result) ?? s.intervalMs));
        } catch (error) {
          if (!o.outages?.report(error)) o.log.error({ err: error, service: s.name }, `sweep service ${s.name} failed; the others go on`);
        }
        // A run asked for sooner than its interval still leaves a 50 ms breath after it ends (a pass that took longer
        // than it asked for does not go again back to back). A slow look stretches its interval (lookShare).
        const paced = started + Math.max(next, (looked.get(s.name)?.ms ?? 0) / lookShare);
        dueAt.set(s.name, full ? 0 : next < s.intervalMs ? Math.max(started + next, performance.now() + 50) : paced);
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
        const soonest = Math.min(...services.map((s) => dueAt.get(s.name) ?? 0)) - performance.now();
        if (soonest < tickMs) {
          await sleep(Math.max(0, soonest), o.signal);
          return true;
        }
      }
      return false;
    },
  });
}

/** A look's result, and how long it took (ms). */
type Looked = ({ ok: true; value: unknown } | { ok: false; error: unknown }) & { ms?: number };

/**
 * The looks of `due`'s services that have one (`SweepService.split`), in one transaction, in their order, each timed.
 * When one throws, that transaction rolls back and each look runs again in a transaction of its own, so the failure is its
 * service's alone and the others' work commits.
 */
async function lookTogether(ctx: SweepContext, due: SweepService[]): Promise<Map<string, Looked>> {
  const split = due.filter((s) => s.split);
  try {
    return await inTx(ctx.db, async (tx) => {
      const looked = new Map<string, Looked>();
      for (const s of split) {
        const began = performance.now();
        const value = await s.split?.look(tx, ctx);
        looked.set(s.name, { ok: true, value, ms: performance.now() - began });
      }
      return looked;
    });
  } catch {
    const looked = new Map<string, Looked>();
    for (const s of split) {
      looked.set(
        s.name,
        await inTx(ctx.db, (tx) => (s.split as NonNullable<SweepService["split"]>).look(tx, ctx)).then(
          (value): Looked => ({ ok: true, value }),
          (error: unknown): Looked => ({ ok: false, error }),
        ),
      );
    }
    return looked;
  }
}

/**
 * What the lease loop last learnt: whether this process leads, and until when by its own clock (the lease's length
 * from the moment it asked, so after a renewal that failed or hangs the services stop before the lease can pass to
 * another process).
 */
class Leadership {
  leading = false;
  private until = 0;

  set(leading: boolean, until: number): void {
    this.leading = leading;
    this.until = leading ? until : 0;
  }

  holds(): boolean {
    return this.leading && performance.now() < this.until;
  }
}
