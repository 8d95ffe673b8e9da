import type { Tx } from "@holdfast/db";
import { type FiredAndWalked, timersFireWalk } from "../../store/sql/timers-fire-walk";
import type { GraphCache } from "../../versions/graph-cache";
import { type AdvanceResult, advanceMany } from "./advance";
import { timerPlansOf } from "./timer-plans";

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
  const fired = ids.length ? await timersFireWalk(tx, ids, wakes, actor, book.sql()) : [];
  const rest = fired.filter((f) => f.walked === null);
  for (const f of rest) {
    if (f.versionId !== null && f.nodeId !== null && !book.knows(f.versionId, f.nodeId)) {
      book.learn(f.versionId, f.nodeId, await graphs.get(tx, f.orgId, f.versionId));
    }
  }
  const walks = new Map<string, AdvanceResult>(
    (await advanceMany(tx, graphs, rest.map((f) => ({ orgId: f.orgId, runId: f.runId })), actor)).map((w) => [w.runId, w]),
  );
  for (const f of fired) {
    if (f.walked !== null) walks.set(f.runId, { commands: book.commands(f.versionId ?? "", f.nodeId ?? ""), status: f.walked });
  }
  return { fired, walks };
}
