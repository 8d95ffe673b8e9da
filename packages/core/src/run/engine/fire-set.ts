import type { Tx } from "@holdfast/db";
import { runsRunningVersions } from "../../store/sql/runs";
import type { DuePick, SweepBatch } from "../../store/sql/timers";
import { type FiredAndWalked, timersFireWalk, timersSweepFireWalk } from "../../store/sql/timers-fire-walk";
import type { GraphCache } from "../../versions/graph-cache";
import { type AdvanceResult, advanceMany } from "./advance";
import { type TimerPlans, timerPlansOf } from "./timer-plans";

/**
 * Fires timers as a set and moves their runs on (the engine's batches and the due sweep): one statement fires them
 * and applies the walk to every run whose walk the graph alone decides (holdfast_timers_fire_walk, with the plans
 * this process has learnt: run/engine/timer-plans.ts); every other fired run is walked here, in the same transaction,
 * as the engine walks a run (`advanceMany`: a run another transaction holds gets a run.wake). A version not yet in the
 * book is walked the usual way once, and learnt for the next batch.
 */
export async function fireAndWalkSet(
  tx: Tx,
  graphs: GraphCache,
  ids: string[],
  /** Each timer's wake number (the engine's jobs), or null (the due sweep's own pick). */
  wakes: number[] | null,
  actor: string,
): Promise<{ fired: FiredAndWalked[]; walks: Map<string, AdvanceResult> }> {
  const book = timerPlansOf(graphs);
  if (!book.primed && ids.length) await prime(tx, graphs, book);
  const fired = ids.length ? await timersFireWalk(tx, ids, wakes, actor, book.sql()) : [];
  const walks = await walkRest(tx, graphs, book, fired.filter((f) => f.walked === null), actor);
  for (const f of fired) {
    if (f.walked !== null) walks.set(f.runId, { commands: book.commands(f.versionId ?? "", f.nodeId ?? ""), status: f.walked });
  }
  return { fired, walks };
}

/**
 * The due sweep's batch: its fair pick fired and moved on as `fireAndWalkSet` does, in one statement with the pick and
 * the organisations' served stamps (timersSweepFireWalk); the runs the statement left are walked here. Returns what
 * each organisation had fired.
 */
export async function sweepAndWalkSet(
  tx: Tx,
  graphs: GraphCache,
  pick: DuePick,
  actor: string,
): Promise<SweepBatch["fired"]> {
  const book = timerPlansOf(graphs);
  if (!book.primed) await prime(tx, graphs, book);
  const { rest, fired } = await timersSweepFireWalk(tx, pick, actor, book.sql());
  await walkRest(tx, graphs, book, rest, actor);
  return fired;
}

/**
 * The book learns every version with running runs it does not know yet (`TimerPlans.primeDue`: before the process's
 * first batch, then when a batch meets a version it does not know, at most once a minute).
 */
async function prime(tx: Tx, graphs: GraphCache, book: TimerPlans): Promise<void> {
  if (!book.primeDue(Date.now())) return;
  for (const v of await runsRunningVersions(tx, book.capacity)) {
    // Never more than a batch sends: a walk learnt here must not push out one a batch needs.
    if (book.sent >= book.capacity / 2) break;
    if (book.knowsVersion(v.versionId)) continue;
    // A graph that does not read is left to the walk of its own runs, which fails them alone.
    const graph = await graphs.get(tx, v.orgId, v.versionId).catch(() => null);
    if (graph) book.learnVersion(v.versionId, graph);
  }
}

/**
 * The fired runs the statement did not move on, walked in this transaction; their versions learnt for the next batch.
 * A version met for the first time has the book learn every version with running runs (`prime`): in a spike of 100
 * organisations' timers, learning each version only from its own first batch walked 4,500 of 100,000 runs the slow way
 * (and the engine's batches, in a book of their own, more).
 */
async function walkRest(tx: Tx, graphs: GraphCache, book: TimerPlans, rest: FiredAndWalked[], actor: string): Promise<Map<string, AdvanceResult>> {
  if (rest.some((f) => f.versionId !== null && f.nodeId !== null && !book.knows(f.versionId, f.nodeId))) await prime(tx, graphs, book);
  for (const f of rest) {
    if (f.versionId !== null && f.nodeId !== null && !book.knows(f.versionId, f.nodeId)) {
      book.learn(f.versionId, f.nodeId, await graphs.get(tx, f.orgId, f.versionId));
    }
  }
  const walked = rest.length ? await advanceMany(tx, graphs, rest.map((f) => ({ orgId: f.orgId, runId: f.runId })), actor) : [];
  return new Map<string, AdvanceResult>(walked.map((w) => [w.runId, w]));
}
