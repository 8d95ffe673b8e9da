import { type Db, inTx } from "@holdfast/db";
import type { TimerDue } from "../../base/catalog";
import { crashpoint } from "../../base/crash";
import type { AdvanceResult } from "./advance";
import { fireAndWalkSet } from "./fire-set";
import { timersDueInMsMany } from "../../store/sql/timers";
import type { GraphCache } from "../../versions/graph-cache";
import type { FireResult } from "../timers/fire";

interface Waiting {
  due: TimerDue;
  resolve(result: FireResult): void;
  reject(error: unknown): void;
}

/**
 * The fast path's group commit. A timer's delayed job asks `fire(due)`; the jobs that arrive while a batch is in
 * flight wait for it and then go together, up to `max`: their timers fired (each only if due by the database clock,
 * unfired and at its wake number) and their runs walked on in one transaction, as the due sweep does
 * (`advanceMany`). A run locked elsewhere is not waited for: it gets a run.wake instead. A burst of timers due at once
 * therefore costs one commit a batch, where each used to cost two (its firing, then its walk). A quiet engine fires a
 * lone timer at once, alone. Each job still gets its own answer: fired, not yet due (and in how long: the queue's clock
 * ran ahead of the database's), or stale (fired already, or moved since). When a batch's transaction throws (a run the
 * walk cannot handle), nothing of it is kept and each of its timers goes through `alone` (one firing and one walk a
 * timer), so one bad run fails alone.
 */
export class TimerFirer {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;
  private readonly max: number;
  private readonly parallel: number;

  constructor(
    private readonly o: {
      db: Db;
      graphs: GraphCache;
      actor: string;
      /** Timers a batch at most. */
      max?: number;
      /** Batches in flight at once; the jobs that arrive meanwhile wait for one to return. */
      parallel?: number;
      /** One timer on its own: the path a batch falls back to. */
      alone: (due: TimerDue) => Promise<FireResult>;
      /** Each fired timer's walk once its batch committed, with the batch's start and end (epoch ms): its trace span. */
      walked?: (due: TimerDue, walk: AdvanceResult, startedAt: number, endedAt: number) => void;
    },
  ) {
    this.max = o.max ?? 64;
    this.parallel = o.parallel ?? 1;
  }

  fire(due: TimerDue): Promise<FireResult> {
    return new Promise<FireResult>((resolve, reject) => {
      this.waiting.push({ due, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.parallel && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.max);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    let results: { result: FireResult; walk?: AdvanceResult }[];
    const startedAt = Date.now();
    try {
      results = await fireAndWalk(this.o.db, this.o.graphs, batch.map((w) => w.due), this.o.actor);
      crashpoint("engine.after_commit");
    } catch {
      await Promise.all(batch.map((w) => this.o.alone(w.due).then(w.resolve, w.reject)));
      return;
    }
    const endedAt = Date.now();
    for (const [i, w] of batch.entries()) {
      const { result, walk } = results[i] as (typeof results)[number];
      w.resolve(result);
      // What the hook does (a trace span) never holds back the jobs' answers.
      if (walk) {
        try {
          this.o.walked?.(w.due, walk, startedAt, endedAt);
        } catch {}
      }
    }
  }
}

/**
 * One batch: fire what is due, walk the fired runs on, and say for each timer what became of it. A batch of more than
 * one job (a backlog) first reads which of its timers are still to fire, outside any transaction: in a spike at one
 * instant the due sweep fires most timers before their delayed jobs arrive, and a batch of such jobs then costs that
 * one read, not a firing transaction. A lone job goes straight to the firing (the fast path: one transaction).
 */
async function fireAndWalk(db: Db, graphs: GraphCache, dues: TimerDue[], actor: string): Promise<{ result: FireResult; walk?: AdvanceResult }[]> {
  // A job that came twice in one batch: its timer is fired once, and the second job finds it stale.
  const key = (d: { timerId: string; wake: number }) => `${d.timerId}:${d.wake}`;
  const unique = [...new Map(dues.map((d) => [key(d), d])).values()];
  // Unfired at its wake: in how long it is due (0: due now). Fired, moved or gone: absent, and never to fire again.
  const pending = unique.length > 1 ? await timersDueInMsMany(db, unique) : null;
  const toFire = pending ? unique.filter((d) => pending.get(key(d)) === 0) : unique;
  const { runOf, walks, inMs } = toFire.length
    ? await inTx(db, async (tx) => {
        // Fired and walked as a set where the graph alone decides the walk (run/engine/fire-set.ts).
        const { fired, walks } = await fireAndWalkSet(tx, graphs, toFire.map((d) => d.timerId), toFire.map((d) => d.wake), actor);
        const runOf = new Map(fired.map((f) => [key(f), f.runId]));
        // A timer read as due that did not fire here was fired by another (the due sweep) or moved since: stale.
        const left = pending ? [] : toFire.filter((d) => !runOf.has(key(d)));
        return { runOf, walks, inMs: pending ?? (left.length ? await timersDueInMsMany(tx, left) : new Map<string, number>()) };
      })
    : { runOf: new Map<string, string>(), walks: new Map<string, AdvanceResult>(), inMs: pending ?? new Map<string, number>() };
  return dues.map((d) => {
    const runId = runOf.get(key(d));
    if (runId !== undefined) {
      runOf.delete(key(d));
      const walk = walks.get(runId);
      return { result: { kind: "fired", runId }, ...(walk ? { walk } : {}) };
    }
    const ms = inMs.get(key(d));
    return { result: ms !== undefined && ms > 0 ? { kind: "not_due", inMs: ms } : { kind: "stale" } };
  });
}
