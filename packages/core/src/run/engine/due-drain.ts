import { type Db, inTx } from "@holdfast/db";
import { databaseMsUntil } from "../../store/sql/database";
import { timersTakeFiringSlot } from "../../store/sql/timers";
import type { GraphCache } from "../../versions/graph-cache";
import { sweepAndWalkSet } from "./fire-set";

/** The fair due sweep's batch: organisations at most, timers from each, timers in all (store/sql/timers.ts dueFairlyPick). */
export interface DuePick {
  orgs: number;
  perOrg: number;
  total: number;
}

/** The batch the due sweep takes unless set otherwise (TIMER_SWEEP_ORGS, _PER_ORG, _BATCH), and the engine's. */
export const duePickDefaults: DuePick = { orgs: 20, perOrg: 50, total: 500 };

/**
 * The engine's answer to a `timers.due` job (the timers of one relay batch due at one instant, run/relay/publications.ts):
 * once the instant has come by the database clock, the due sweep's own batches (sweepAndWalkSet: the fair pick, fired
 * and walked as a set), one after another until one comes back short, beside the sweeper's (SKIP LOCKED keeps them
 * apart), while one of the due sweep's batch slots is free (store/sql/timers.ts timersTakeFiringSlot). Each batch fires
 * whatever is due, fairly across organisations, not the job's timers alone: in a spike the engine and the sweeper
 * share one backlog, where firing each job's timers by id had the engine's batches wait on the sweeper's locks and
 * find most of their timers fired (docs/performance.md).
 * A job that comes while a pass runs waits for the next pass, which all such jobs share: the pass running may have
 * looked for due timers before its timers were written. So a spike's few hundred jobs cost one drain and one empty
 * pick, not one drain each.
 */
export class DueDrain {
  private running: Promise<number> | null = null;
  private next: Promise<number> | null = null;

  constructor(private readonly o: { db: Db; graphs: GraphCache; actor: string; pick: DuePick }) {}

  /** The job's answer: not yet due (and in how long), or done with how many timers the pass it joined fired. */
  async due(dueAt: string): Promise<{ kind: "not_due"; inMs: number } | { kind: "done"; fired: number }> {
    const inMs = await databaseMsUntil(this.o.db, dueAt);
    if (inMs > 0) return { kind: "not_due", inMs };
    return { kind: "done", fired: await this.request() };
  }

  /** A pass that starts after this call, once it has ended: the timers it fired. */
  request(): Promise<number> {
    if (!this.running) return this.start();
    this.next ??= this.running
      .catch(() => 0)
      .then(() => {
        this.next = null;
        return this.start();
      });
    return this.next;
  }

  private start(): Promise<number> {
    const pass: Promise<number> = this.pass().finally(() => {
      if (this.running === pass) this.running = null;
    });
    this.running = pass;
    return pass;
  }

  /** Batches until one comes back short, or every slot of the due sweep's batches is taken (the sweeper's go on). */
  private async pass(): Promise<number> {
    let fired = 0;
    for (;;) {
      const batch = await inTx(this.o.db, async (tx) =>
        (await timersTakeFiringSlot(tx)) ? sweepAndWalkSet(tx, this.o.graphs, this.o.pick, this.o.actor) : null,
      );
      const n = batch?.reduce((a, f) => a + f.count, 0) ?? 0;
      fired += n;
      if (n < this.o.pick.total) return fired;
    }
  }
}
