import { inTx } from "@holdfast/db";
import { z } from "zod";
import { sweepAndWalkSet } from "../../engine/fire-set";
import { duePickDefaults, type SweepBatch, timersFireDueFairly, timersTakeFiringSlot } from "../../../store/sql/timers";
import { defaultIntervalMs, defineService, type SweepContext, setting, sweepSharedEnv } from "../service";

export interface DueTimersResult {
  /** Timers fired (each wakes its run). */
  fired: number;
  /** Batches taken (at most `maxBatches`; the last one came back empty unless the cap stopped it). */
  batches: number;
  /** Why walking a batch's runs failed (they were fired with run.wake rows instead), when it did. */
  walkFailed?: unknown;
  /** A batch found every slot of the due sweep's batches taken (engines draining): it fired nothing, and looks again soon. */
  busy?: boolean;
}

/**
 * The due sweep, the timers' backstop beside the engine's fast path: up to `orgs` organisations with due timers,
 * least recently served first, up to `perOrg` timers from each (or an equal part of `batch` when fewer organisations
 * have due timers) and `batch` in all, fired in one transaction per
 * batch; batches repeat while they find work, up to `maxBatches` per run; a run that fired anything runs again after
 * `busyIntervalMs` (docs/timers.md).
 */
export const dueTimers = defineService({
  name: "due-timers",
  // Its own loop: firing due timers never waits behind a maintenance scan (docs/performance.md, the 09:00 spike).
  loop: "timers",
  env: z
    .object({
      ...sweepSharedEnv.shape,
      SWEEP_DUE_TIMERS_INTERVAL_MS: setting.intervalMs.optional(),
      TIMER_SWEEP_ORGS: z.coerce.number().int().min(1).max(1_000).default(duePickDefaults.orgs).describe("The fair due sweep: organisations per batch"),
      TIMER_SWEEP_PER_ORG: z.coerce.number().int().min(1).max(10_000).default(duePickDefaults.perOrg).describe("The fair due sweep: timers per organisation in a batch (more when fewer organisations have due timers)"),
      TIMER_SWEEP_BATCH: z.coerce.number().int().min(1).max(10_000).default(duePickDefaults.total).describe("The fair due sweep: timers per batch"),
      TIMER_SWEEP_MAX_BATCHES: z.coerce.number().int().min(1).max(1_000).default(20).describe("The fair due sweep: batches per run"),
      // At most 2: the sweeper's pool of 4 connections also carries the lease's renewal and the maintenance loop.
      TIMER_SWEEP_PARALLEL: z.coerce.number().int().min(1).max(2).default(2).describe("Batches at once while draining a backlog (a full first batch), at most 2"),
      TIMER_SWEEP_BUSY_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(250).describe("After a run that fired timers, the next comes this soon (ms) instead of the interval"),
    })
    .transform((e) => ({
      intervalMs: e.SWEEP_DUE_TIMERS_INTERVAL_MS ?? e.SWEEP_INTERVAL_MS ?? defaultIntervalMs,
      orgs: e.TIMER_SWEEP_ORGS,
      perOrg: e.TIMER_SWEEP_PER_ORG,
      batch: e.TIMER_SWEEP_BATCH,
      maxBatches: e.TIMER_SWEEP_MAX_BATCHES,
      parallel: e.TIMER_SWEEP_PARALLEL,
      busyIntervalMs: e.TIMER_SWEEP_BUSY_INTERVAL_MS,
    })),
  async runOnce(ctx, s): Promise<DueTimersResult> {
    let fired = 0;
    let batches = 0;
    let walkFailed: unknown;
    let busy = false;
    const one = async (): Promise<number> => {
      batches++;
      const batch: Pick<SweepBatch, "fired"> & { busy?: true } = await fireAndWalk(ctx, s).catch(async (error: unknown) => {
        // A walk that throws (a run the walk cannot handle) must not hold the timers back: fired as before, each run
        // with its run.wake for the engine, where such a run fails alone.
        walkFailed = error;
        return inTx(ctx.db, (tx) => timersFireDueFairly(tx, s.orgs, s.perOrg, s.batch, ctx.actor));
      });
      if (batch.busy) busy = true;
      const n = batch.fired.reduce((a, f) => a + f.count, 0);
      fired += n;
      return n;
    };
    // Keep draining a backlog (rotating organisations) up to maxBatches per run, until a batch comes back empty.
    const drain = async () => {
      while (batches < s.maxBatches) if ((await one()) === 0) return;
    };
    // A full first batch means a backlog (a spike due at once): `parallel` batches go at once, SKIP LOCKED keeping
    // them apart, so the walks of one overlap the firing of the next.
    const first = await one();
    if (first >= s.batch) {
      // Every drain ends before the run does (none left running into the next run), then a failure is thrown.
      const ended = await Promise.allSettled(Array.from({ length: s.parallel }, drain));
      const failed = ended.find((e) => e.status === "rejected");
      if (failed) throw failed.reason;
    }
    else if (first > 0) await drain();
    return { fired, batches, ...(busy ? { busy } : {}), ...(walkFailed === undefined ? {} : { walkFailed }) };
  },
  // Stopped by maxBatches while still firing: run again after a short breath, not after the interval (an empty run
  // is never full, so the loop cannot spin on nothing).
  full: (r, s) => r.batches >= s.maxBatches && r.fired > 0,
  // A run that fired timers is a sign more are coming due (a spike spread over minutes, or delayed jobs lost or late):
  // look again after `busyIntervalMs`, not the interval. Measured on one machine, spike at spread 600 with the queue
  // working: p50/p99 lateness 1.55/4.89 s at the 2 s interval, 0.94/4.24 s with it (docs/performance.md).
  nextInMs: (r, s) => (r.fired > 0 || r.busy ? s.busyIntervalMs : undefined),
  report(r, log) {
    if (r.walkFailed !== undefined) log.error({ err: r.walkFailed }, "due sweep could not walk the runs it fired; they were fired with wake-ups for the engine");
    if (r.fired) log.debug({ timersFired: r.fired, batches: r.batches }, "due sweep fired timers");
    if (r.busy) log.debug({ batches: r.batches }, "due sweep found both batch slots taken (engines draining); looking again soon");
  },
});

/**
 * One batch: fires the due timers and walks their runs on in the same transaction (the start's way: no run.wake row,
 * no relay hop, no engine transaction per run). A wait settled at 09:00 reaches its next step, or its run's end, in
 * the commit that fired it.
 */
function fireAndWalk(ctx: SweepContext, s: { orgs: number; perOrg: number; batch: number }): Promise<Pick<SweepBatch, "fired"> & { busy?: true }> {
  // Picked (and locked), fired and walked as a set where the graph alone decides the walk, in one statement; only in
  // a free slot of the due sweep's batches (the engines' drains take them too: run/engine/due-drain.ts).
  return inTx(ctx.db, async (tx) =>
    (await timersTakeFiringSlot(tx, "sweeper")) ? { fired: await sweepAndWalkSet(tx, ctx.graphs, { orgs: s.orgs, perOrg: s.perOrg, total: s.batch }, ctx.actor) } : { fired: [], busy: true },
  );
}
