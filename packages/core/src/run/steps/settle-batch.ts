import type { Sql } from "@holdfast/db";
import { crashpoint } from "../../base/crash";
import { type RunSettleRequest, type SettleResult, stepsSettleIfToken, stepsSettleManyIfToken, type TakeAfterSettle } from "../../store/sql/steps-settle";
import type { ReadyDemand } from "./ready-demand";

/**
 * Group commit for a lane worker's settles. A settle that finds no batch in flight goes at once, alone (no added
 * latency when the worker is quiet); settles that arrive while a batch is in flight wait for it and then go together,
 * up to `max` in one statement and one commit (holdfast_step_settle_batch). Fencing stays per step: a stale attempt in
 * a batch answers `changed: false` alone. If a batch fails as a whole (nothing of it committed: a deadlock, a lost
 * connection), each of its settles is tried alone, so one bad item never costs its neighbours their settle. A park
 * (a step that waits for a person or a connection) always settles alone: it locks what it waits for first.
 * With `take`, a batch also fills the slots it frees: its settles that asked to (`take: true`) and claimed no next step
 * may each come back with a first step of the lane, taken from the outbox and claimed in the batch's commit, for the
 * slot to run next (`taken`). It takes only while `demand` says a look is owed, and its answer answers that look.
 */
export class SettleBatcher {
  private waiting: { request: RunSettleRequest; onSend: () => void; resolve: (r: SettleResult) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  /** Settles and statements so far (the worker's log and the bench read them). */
  readonly stats = { settles: 0, statements: 0, fallbacks: 0, taken: 0 };

  constructor(
    private readonly sql: Sql,
    private readonly options: {
      max: number;
      /** Batches in flight at once (each holds a pooled connection). */
      parallel: number;
      /** While a batch is in flight, another opens only once this many settles wait (1: as soon as one does). */
      crowd?: number;
      /** First steps taken for the slots a batch frees (the lane's, for this worker), while `demand` owes a look. */
      take?: { params: () => TakeAfterSettle; demand: ReadyDemand } | null;
      /** A batch failed as a whole and its settles went alone (called on the first and every hundredth). */
      onFallback?: (error: unknown, fallbacks: number) => void;
    },
  ) {}

  private stopped = false;

  /** Whether a settle may ask to run a taken first step in its slot now (`take` on its request). */
  mayTake(): boolean {
    return !this.stopped && (this.options.take?.demand.settleMayTake() ?? false);
  }

  /** Takes no more first steps (the worker is shutting down); settles go on as before. */
  stopTaking(): void {
    this.stopped = true;
  }

  /** `onSend` is called as the settle's statement goes out (the caller's lease heartbeat stops there). */
  settle(request: RunSettleRequest, onSend: () => void = () => {}): Promise<SettleResult> {
    // A park locks what it waits for (the connection, the budget) before its run, the order the resumes take; inside a
    // batch it would come after its neighbours' runs, so a resume could deadlock with the batch. Parks go alone.
    return new Promise((resolve, reject) => {
      const item = { request, onSend, resolve, reject };
      if (request.status === "parked") void this.send([item], () => {});
      else {
        this.waiting.push(item);
        this.pump();
      }
    });
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.inFlight < this.options.parallel) {
      if (this.inFlight > 0 && this.waiting.length < (this.options.crowd ?? 1)) return;
      const batch = this.waiting.splice(0, this.options.max);
      this.inFlight += 1;
      let freed = false;
      const free = () => {
        if (freed) return;
        freed = true;
        this.inFlight -= 1;
        this.pump();
      };
      this.send(batch, free).finally(free);
    }
  }

  /**
   * `free` gives the batch's place back as soon as its commit has answered, before its settles are resolved: the
   * settles that waited meanwhile go out at once, and PostgreSQL runs their batch while this process carries on the
   * steps the answer released (their next steps' calls), instead of after.
   */
  private async send(batch: typeof this.waiting, free: () => void): Promise<void> {
    this.stats.settles += batch.length;
    this.stats.statements += 1;
    for (const b of batch) b.onSend();
    // No take once the worker stops chaining (shutdown): steps taken now would only wait out their leases.
    const take = this.options.take && !this.stopped && batch.some((b) => b.request.take) ? this.options.take : null;
    if (batch.length === 1 && !take) {
      const [one] = batch as [(typeof batch)[number]];
      await stepsSettleIfToken(this.sql, one.request).then((r) => {
        free();
        one.resolve(r);
      }, one.reject);
      return;
    }
    const mark = take?.demand.mark() ?? 0;
    let results: SettleResult[];
    try {
      let looked: boolean;
      let taken: number;
      let more: boolean;
      ({ results, looked, taken, more } = await stepsSettleManyIfToken(this.sql, batch.map((b) => b.request), take?.params()));
      free();
      if (take && looked) take.demand.answered(mark, more);
      if (taken > 0) {
        this.stats.taken += results.filter((r) => r.taken).length;
        // Taken rows are marked sent and their steps claimed by this worker: a death from here leaves them running
        // under leases that lapse, and the sweeper hands them on (step.lease_expired), as after any claim.
        crashpoint("worker.after_settle_take");
      }
    } catch (error) {
      // Nothing of the batch committed: each settle alone, each fenced by its attempt as before. Its take committed
      // nothing either: the rows it had locked are due again, and a listener's take that skipped them meanwhile may
      // have found the lane answered, so a look is owed again.
      this.stats.fallbacks += 1;
      take?.demand.failed();
      // Said on the first and every hundredth: during a deploy, a worker of the release before fails every batch.
      if (this.stats.fallbacks % 100 === 1) this.options.onFallback?.(error, this.stats.fallbacks);
      await Promise.all(batch.map((b) => stepsSettleIfToken(this.sql, b.request).then(b.resolve, b.reject)));
      return;
    }
    for (const [i, b] of batch.entries()) b.resolve(results[i] as SettleResult);
  }
}
