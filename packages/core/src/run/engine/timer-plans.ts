import { planAfterTimer } from "../../decide/walk/plan";
import { edgeCount } from "../apply/rows";
import type { Graph } from "../../versions/graph";
import type { GraphCache } from "../../versions/graph-cache";

/** The walk after a wait's timer, in the form holdfast_timers_fire_walk applies (store/sql/functions/timers_fire_walk.sql). */
interface SqlPlan {
  edges: { nodeId: string; bucket: string }[];
  next: { nodeId: string; kind: string; lane: string; maxAttempts: number } | null;
  end: string | null;
}

/**
 * The walks the set path may apply, by version and wait node, learnt from the graphs of the runs this process walked
 * after their timers fired (a version is walked the usual way once, then fired as a set). A graph never changes once
 * published, so an entry is good for ever; the book keeps the `capacity` most recently learnt, since every one is
 * sent with each batch. A wait whose walk needs the run's data (a branch, a split, an approval, another wait next)
 * is remembered as such and never sent.
 */
export class TimerPlans {
  private readonly plans = new Map<string, SqlPlan | null>();
  private readonly versions = new Set<string>();
  private json: string | null = null;
  private primedAt = Number.NEGATIVE_INFINITY;

  constructor(readonly capacity = 256) {}

  /** How many walks the book would send (each batch sends `capacity` at most). */
  get sent(): number {
    let n = 0;
    for (const plan of this.plans.values()) if (plan) n++;
    return Math.min(n, this.capacity);
  }

  /** Whether every wait of this version is known (learnt with `learnVersion`). */
  knowsVersion(versionId: string): boolean {
    return this.versions.has(versionId);
  }

  /** The walks after every wait and reply wait of a version's graph. */
  learnVersion(versionId: string, graph: Graph): void {
    for (const node of graph.nodes) if (node.kind === "wait" || node.kind === "wait_for_reply") this.learn(versionId, node.id, graph);
    if (this.versions.size >= this.capacity * 4) this.versions.delete(this.versions.values().next().value as string);
    this.versions.add(versionId);
  }

  /** Whether the book has learnt the running versions yet (`primeDue`). */
  get primed(): boolean {
    return this.primedAt !== Number.NEGATIVE_INFINITY;
  }

  /**
   * Whether to learn the running versions now (before the process's first batch, or when a batch met a version not in
   * the book): at most once in `everyMs`, so a deployment with more versions than the book holds does not read them
   * all at every batch.
   */
  primeDue(now: number, everyMs = 60_000): boolean {
    if (now - this.primedAt < everyMs) return false;
    this.primedAt = now;
    return true;
  }

  /** Whether the walk after this wait is known (as a plan or as "walk it"). */
  knows(versionId: string, nodeId: string): boolean {
    return this.plans.has(key(versionId, nodeId));
  }

  learn(versionId: string, nodeId: string, graph: Graph): void {
    const walk = planAfterTimer(graph, nodeId);
    const plan: SqlPlan | null = walk && {
      edges: walk.edges.map(edgeCount),
      next: walk.next && { nodeId: walk.next.nodeId, kind: walk.next.kind, lane: walk.next.lane, maxAttempts: walk.next.maxAttempts },
      end: walk.end,
    };
    if (this.plans.size >= this.capacity * 4) this.plans.delete(this.plans.keys().next().value as string);
    this.plans.set(key(versionId, nodeId), plan);
    if (plan) this.json = null;
  }

  /** The plans to send with a batch, as the statement's JSON object (made once per change). */
  sql(): string {
    if (this.json === null) {
      const known = [...this.plans].filter((e): e is [string, SqlPlan] => e[1] !== null).slice(-this.capacity);
      this.json = JSON.stringify(Object.fromEntries(known));
    }
    return this.json;
  }

  /** What the walk's commands were for a run the statement moved on (a fired run's trace span). */
  commands(versionId: string, nodeId: string): ("mark_advanced" | "take_edge" | "schedule_step" | "complete_run")[] {
    const plan = this.plans.get(key(versionId, nodeId));
    if (!plan) return [];
    return ["mark_advanced", ...plan.edges.map(() => "take_edge" as const), plan.next ? "schedule_step" : "complete_run"];
  }
}

const key = (versionId: string, nodeId: string) => `${versionId} ${nodeId}`;

const books = new WeakMap<GraphCache, TimerPlans>();

/** One book per graph cache: the engine's batches and the due sweep of one process learn once. */
export function timerPlansOf(graphs: GraphCache): TimerPlans {
  let book = books.get(graphs);
  if (!book) books.set(graphs, (book = new TimerPlans()));
  return book;
}
