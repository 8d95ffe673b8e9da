import { type Db, inTx } from "@holdfast/db";
import { sleep } from "../../base/sleep";
import { databaseMsUntil } from "../../store/sql/database";
import { type DuePick, timersAnyDue, timersFireDueFairly, timersTakeFiringSlot } from "../../store/sql/timers";
import type { GraphCache } from "../../versions/graph-cache";
import { sweepAndWalkSet } from "./fire-set";

/**
 * The engine's answer to a `timers.due` job (the timers of one relay batch due at one instant, run/relay/publications.ts):
 * once the instant has come by the database clock, the due sweep's own batches (sweepAndWalkSet: the fair pick, fired
 * and walked as a set), beside the sweeper's (SKIP LOCKED keeps them apart), until none is due. Each batch fires
 * whatever is due, fairly across organisations, not the job's timers alone: in a spike the engine and the sweeper
 * share one backlog, where firing each job's timers by id had the engine's batches wait on the sweeper's locks and
 * find most of their timers fired (bench/results/2026-12-07-2330-spike-timers-due-jobs.json).
 * One pass at a time per engine: the job that starts it holds it; a job that comes while it runs is answered at once
 * (`joined`) and the pass looks once more before it ends, so it ends only after a look that began after the job came.
 * A pass ends when a batch fired nothing and no timer is due, not before: a batch comes back short or empty while the
 * sweeper's batches hold due timers, so "done" means every timer due when the pass ended was fired (or, past
 * `maxPassMs`, is left to the sweep). An engine batch takes the second of the due sweep's two slots only
 * (timersTakeFiringSlot), so however many engines drain, the sweeper always has a slot.
 */
export class DueDrain {
  private running: Promise<number> | null = null;
  /** A job came while the pass ran: it looks once more before it ends. */
  private again = false;
  private readonly maxPassMs: number;
  private readonly pauseMs: number;

  constructor(
    private readonly o: {
      db: Db;
      graphs: GraphCache;
      actor: string;
      pick: DuePick;
      /** A pass gives up after this long with timers still due but held by others (the sweep fires them). */
      maxPassMs?: number;
      /** Between looks while the sweeper's batches hold what is due. */
      pauseMs?: number;
    },
  ) {
    this.maxPassMs = o.maxPassMs ?? 60_000;
    this.pauseMs = o.pauseMs ?? 100;
  }

  /** The job's answer: not yet due (and in how long), done (the pass it started fired this many), or joined. */
  async due(dueAt: string): Promise<{ kind: "not_due"; inMs: number } | { kind: "done"; fired: number } | { kind: "joined" }> {
    const inMs = await databaseMsUntil(this.o.db, dueAt);
    if (inMs > 0) return { kind: "not_due", inMs };
    if (this.running) {
      this.again = true;
      return { kind: "joined" };
    }
    this.again = false;
    this.running = this.pass();
    return { kind: "done", fired: await this.running };
  }

  private async pass(): Promise<number> {
    const started = Date.now();
    let fired = 0;
    try {
      for (;;) {
        const n = await this.batch();
        if (n) {
          fired += n;
          continue;
        }
        // Nothing fired: none is due, or the sweeper's batches hold what is (its slots or its rows).
        if (!(await timersAnyDue(this.o.db))) {
          if (!this.again) {
            // In the same turn as the look: a job that comes from here on starts a pass of its own.
            this.running = null;
            return fired;
          }
          this.again = false;
          continue;
        }
        if (Date.now() - started > this.maxPassMs) {
          this.running = null;
          return fired;
        }
        await sleep(this.pauseMs);
      }
    } catch (error) {
      this.running = null;
      throw error;
    }
  }

  /**
   * One batch in the engines' slot: timers fired, or null when the slot is taken. A batch whose walk throws (a run the
   * walk cannot handle) is fired again without the walk, each run with its run.wake, as the sweeper does.
   */
  private async batch(): Promise<number | null> {
    const { db, graphs, pick, actor } = this.o;
    const count = (fired: { count: number }[]) => fired.reduce((a, f) => a + f.count, 0);
    try {
      return await inTx(db, async (tx) => ((await timersTakeFiringSlot(tx, "engine")) ? count(await sweepAndWalkSet(tx, graphs, pick, actor)) : null));
    } catch {
      return inTx(db, async (tx) =>
        (await timersTakeFiringSlot(tx, "engine")) ? count((await timersFireDueFairly(tx, pick.orgs, pick.perOrg, pick.total, actor)).fired) : null,
      );
    }
  }
}
