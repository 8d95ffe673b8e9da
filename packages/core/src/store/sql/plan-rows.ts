import type { OutboxRow } from "./outbox";
import type { RunEventRow } from "./run-events";
import type { NewStep } from "./steps";

/**
 * What holdfast_rows_insert (store/sql/functions/rows_insert.sql) inserts as given: the rows of a walk the applier prepared
 * (run/apply/rows.ts), for the start's and the settle's one statement. Nothing in SQL decides what they are.
 */
export interface PlanRows {
  steps: StepInsert[];
  /** In timeline order. */
  events: RunEventRow[];
  outbox: OutboxRow[];
  /** How the run ends, written by the calling function with its own update of the run row. */
  finish: null | { status: "completed" | "failed"; error: Record<string, unknown> | null };
  /** Settled steps the walk went on from (the settle marks its own step in its fenced update). */
  advanced: string[];
  /**
   * The step inserted already claimed (local dispatch), and whether its effect key is claimed with it. runStepsKnown:
   * the settling worker knows the run's steps after these rows (store/sql/steps-settle.ts SettleRequest.advance.stepsAfter), so
   * holdfast_step_settle does not send them back.
   */
  claim: null | { stepId: string; nodeId: string; iteration: number; kind: string; leaseMs: number; effect: boolean; runStepsKnown?: boolean };
  /**
   * The edges the walk took, as journey count changes of the caller's run (holdfast_rows_insert writes them with the
   * run's version, none for a test run): they name no run, so they can only ever count for the run the caller holds.
   */
  edges?: EdgeCount[];
}

/** A new step row for holdfast_rows_insert: a claimed one carries its owner, attempt and lease length. */
export interface StepInsert extends NewStep {
  owner?: string;
  attempt?: number;
  leaseMs?: number;
}

/** One edge a walk took: one run into `bucket` ('edge:<label or ''>:<to>') at `nodeId`, the edge's from node. */
export interface EdgeCount {
  nodeId: string;
  bucket: string;
  /**
   * The count names its run: only an edge that leaves a split, whose path the fold remembers for the run's later
   * reply, click or conversion (run_split_paths). Any other edge is counted without it, summed with its neighbours'
   * in a settle batch or a set of timers fired (count_tallies).
   */
  run: boolean;
}
