import { type Db, prismaSql, type Sql } from "@holdfast/db";
import { stepReady } from "../apply/rows";
import { type Connector, connectorHandler, effectOwner } from "../connectors/connector";
import { connectors } from "../connectors/registry";
import type { PreClaim } from "../../providers/effects/ledger";
import { effectsHeartbeat, effectsRelease, effectsSettle } from "../../store/sql/effects";
import { lanes, type Lane } from "../../base/catalog";
import { crashpoint } from "../../base/crash";
import { effectKey } from "../../providers/effects/keys";
import { LeaseLostError } from "../../base/errors";
import type { Logger } from "../../base/log";
import { egressRefusalOf, egressStepError } from "../../providers/net/egress";
import { effectKinds } from "../../versions/kinds/registry";
import type { OutageReporter } from "../ops/outage";
import { type AttemptSpan, endAttemptSpan, inAttempt, startAttemptSpan } from "../../base/tracing";
import type { ClaimedStep } from "../../store/sql/steps";
import { stepsClaimIfLeaseFree, stepsHeartbeatIfToken, stepsReadyDueInMs, stepsReleaseIfToken, stepsTakeReady } from "../../store/sql/steps-claim";
import { type RunSettleRequest, stepsSettleIfToken } from "../../store/sql/steps-settle";
import { stepsWarm } from "../../store/sql/steps-warm";
import { walkOnAfterSettle } from "./walk-on";
import type { Graph, GraphNode } from "../../versions/graph";
import type { GraphCache } from "../../versions/graph-cache";
import { storable } from "../../base/json";
import type { ReadyDemand } from "./ready-demand";
import { settlementFor, type StepOutcome } from "./retry";
import { SettleBatcher } from "./settle-batch";

export interface StepContext {
  db: Db;
  step: ClaimedStep;
  node: GraphNode;
  /** The effect lease: as long as the step's, extended by the same heartbeat. */
  leaseMs: number;
  /** Aborted when the lease is lost or the worker shuts down: stop, do not settle. */
  signal: AbortSignal;
}

export type StepHandler = (ctx: StepContext) => Promise<StepOutcome>;

/** Every connector's handler, by node kind (run/connectors/). */
export const defaultHandlers: Record<string, StepHandler> = Object.fromEntries(
  connectors.map((c) => [c.kind, connectorHandler(c as Connector) as StepHandler]),
);

export { effectOwner };

/** The step claim took the effect key for this attempt, and nothing called the provider with it. */
const unusedClaim = (step: ClaimedStep) => step.effect?.claimed === true && !(step.effect as PreClaim).used;

export type RunStepResult =
  | { kind: "settled" | "retry_scheduled" | "deferred" | "failed" | "parked" | "not_claimable" | "lease_lost" | "released"; chained?: number }
  /** The wake-up came early (queue and database clocks differ): try again in `inMs`. */
  | { kind: "not_due"; inMs: number };

class ShutdownAbort extends Error {
  constructor() {
    super("worker shutting down");
  }
}

/**
 * Runs steps of one lane: claim (fencing token) -> heartbeat every ~lease/3 -> perform -> settle fenced by the token.
 * Keeps the set of steps in hand so shutdown can release them.
 */
export class StepRunner {
  private readonly inFlight = new Map<string, { step: ClaimedStep; controller: AbortController }>();
  readonly lane: Lane;

  constructor(
    private readonly deps: {
      db: Db;
      /** The claim, settle and heartbeat connection (named prepared statements); Prisma's when absent. */
      sql?: Sql;
      graphs: GraphCache;
      worker: string;
      lane: Lane;
      log: Logger;
      handlers?: Record<string, StepHandler>;
      /**
       * Local dispatch: when a settle schedules the next step on this lane, the same commit claims it for this
       * worker, which runs it in the same slot (no queue hop, no extra commit). `maxChain` bounds how many steps one
       * slot runs in a row before handing back to the queue.
       */
      localDispatch?: { maxChain: number };
      /** A heartbeat that failed for a lost connection is said once per outage there, not once per beat here. */
      outages?: OutageReporter;
      /**
       * Group commit of settles (run/steps/settle-batch.ts): up to `max` settles that meet while `parallel` batches are in
       * flight go in one statement and one commit. Absent: each settle is its own statement.
       */
      settleBatch?: { max: number; parallel: number; crowd?: number };
      /**
       * First-step dispatch by LISTEN (run/steps/ready-listener.ts) owes its lane a look: with local dispatch and batched
       * settles, a settle that chains into no next step may take a first step for its slot in its batch's commit.
       */
      readyDemand?: ReadyDemand;
    },
  ) {
    this.lane = deps.lane ?? lanes.io;
    this.sql = deps.sql ?? prismaSql(deps.db);
    const take =
      deps.readyDemand && deps.localDispatch
        ? { demand: deps.readyDemand, params: () => ({ lane: this.lane.name, worker: deps.worker, leaseMs: this.lane.leaseMs, effectKinds: effectKinds() }) }
        : null;
    const onFallback = (error: unknown, fallbacks: number) =>
      deps.log.warn({ err: error, fallbacks }, "a settle batch failed as a whole; its settles went one by one");
    this.settles = deps.settleBatch && deps.settleBatch.max > 1 ? new SettleBatcher(this.sql, { ...deps.settleBatch, take, onFallback }) : null;
  }

  private readonly sql: Sql;
  /** Null: every settle alone. */
  readonly settles: SettleBatcher | null;

  get busy(): number {
    return this.inFlight.size;
  }

  private stopping = false;

  /** Stop chaining into new steps (shutdown): steps in hand finish, their successors go through the queue. */
  stopChaining(): void {
    this.stopping = true;
    this.settles?.stopTaking();
  }

  /** Readies a new hot-path connection: the claim, take, heartbeat and settle statements planned on it (no row changed). */
  warm(sql: Sql): Promise<void> {
    return stepsWarm(sql, this.lane.name, this.deps.worker, this.lane.leaseMs, effectKinds());
  }

  /** Takes up to `limit` due step.ready rows of this lane from the outbox and claims their steps, in one commit. */
  takeReady(limit: number): Promise<{ taken: number; claimed: ClaimedStep[]; more: boolean }> {
    return stepsTakeReady(this.sql, this.lane.name, limit, this.deps.worker, this.lane.leaseMs, effectKinds());
  }

  /** Runs a step by id (claiming it), or one already claimed for this worker (taken on the lane's NOTIFY). */
  async run(target: string | ClaimedStep): Promise<RunStepResult> {
    let next: string | ClaimedStep | undefined = target;
    let first: RunStepResult | undefined;
    let steps = 0;
    const maxChain = this.deps.localDispatch?.maxChain ?? 0;
    for (; next; steps++) {
      const { result, next: following } = await this.runOne(next, steps < maxChain);
      first ??= result;
      next = following;
    }
    // The first step's outcome answers the queue job; `chained` counts the successors run in the same slot.
    return first && first.kind !== "not_due" ? { ...first, chained: steps - 1 } : (first ?? { kind: "not_claimable" });
  }

  /** Claims `target` (or takes the step a settle already claimed for this worker), runs it and settles it. */
  private async runOne(target: string | ClaimedStep, mayChain: boolean): Promise<{ result: RunStepResult; next?: ClaimedStep }> {
    const { db, worker } = this.deps;
    const stepId = typeof target === "string" ? target : target.id;
    const step = typeof target === "string" ? await stepsClaimIfLeaseFree(this.sql, stepId, worker, this.lane.leaseMs, effectKinds()) : target;
    if (!step) {
      // A duplicate wake-up, a live lease elsewhere, a cancelled run, or a wake-up that came early.
      const inMs = await stepsReadyDueInMs(db, stepId);
      return { result: inMs !== undefined && inMs > 0 ? { kind: "not_due", inMs } : { kind: "not_claimable" } };
    }
    crashpoint("worker.after_claim");
    const span = startAttemptSpan({
      orgId: step.orgId,
      runId: step.runId,
      stepId: step.id,
      nodeId: step.nodeId,
      kind: step.kind,
      attempt: step.attempt,
      effectKey: effectKey(step.runId, step.nodeId, step.iteration),
      lane: this.lane.name,
    });
    if (!span) return this.attempt(step, mayChain);
    try {
      const done = await this.attempt(step, mayChain, span);
      endAttemptSpan(span, done.result.kind, done.error);
      return done;
    } catch (error) {
      endAttemptSpan(span, "thrown", error);
      throw error;
    }
  }

  /** One attempt of a claimed step: perform it, settle it fenced by its token; `error` is what it settled with. */
  private async attempt(step: ClaimedStep, mayChain: boolean, span?: AttemptSpan): Promise<{ result: RunStepResult; next?: ClaimedStep; error?: unknown }> {
    const { db, worker, log } = this.deps;
    const slog = log.child({ orgId: step.orgId, runId: step.runId, stepId: step.id, nodeId: step.nodeId, attempt: step.attempt });
    const controller = new AbortController();
    this.inFlight.set(step.id, { step, controller });
    const heartbeat = this.beat(step, controller, slog);
    try {
      const graph = await this.deps.graphs.get(db, step.orgId, step.versionId);
      const outcome = await inAttempt(span, () => this.perform(step, graph, controller.signal));
      if (controller.signal.aborted) {
        clearInterval(heartbeat);
        await this.keepAnswer(step, outcome);
        const result = await this.afterAbort(step, controller.signal.reason, slog);
        return { result, ...(result.kind === "lease_lost" ? { error: { code: "lease_lost" } } : {}) };
      }
      crashpoint("worker.before_settle");
      // A provider's answer is recorded whatever it contains: text jsonb cannot hold is cleaned, not a reason to retry.
      // Deferrals (no connection slot) gave the step back unstarted: they do not count against its attempts.
      const settlement = settlementFor(storable(outcome), step.attempt - (step.deferrals ?? 0), step.maxAttempts, this.lane.retry);
      const request = settleRequestFor(step, worker, outcome, settlement);
      // A slot that will not chain may run a first step its batch takes (a park settles alone, never in a batch).
      if (request.status !== "parked" && mayChain && !this.stopping && this.settles?.mayTake()) request.take = true;
      if (request.status === "done" || request.status === "failed") {
        // The walk after this step as the applier's rows; with local dispatch the next step on this lane comes claimed.
        const chain = mayChain && !this.stopping && this.deps.localDispatch;
        const own = { status: request.status, output: request.output ?? null, error: request.error ?? null };
        request.advance = walkOnAfterSettle(graph, step, own, worker, chain ? { lane: this.lane.name, leaseMs: this.lane.leaseMs } : null);
      }
      // The lease keeps beating while the settle waits for its batch, and stops as its statement is sent (after that a
      // beat would find the step settled and read it as a lost lease).
      const stopBeating = () => clearInterval(heartbeat);
      const settled = this.settles ? await this.settles.settle(request, stopBeating) : (stopBeating(), await stepsSettleIfToken(this.sql, request));
      if (!settled.changed) {
        await this.keepAnswer(step, outcome);
        slog.warn({ outcome: request.status }, "settle changed 0 rows: a newer attempt holds the step");
        return { result: { kind: "lease_lost" }, error: { code: "lease_lost" } };
      }
      const kind = settledKind(request);
      if (settled.walkRefused) slog.error({ result: kind }, "the walk after this step named another run and was refused (HF005); the engine walks the run instead");
      slog.debug({ result: kind, advanced: settled.advanced }, "step settled");
      // The next step: this run's, claimed by the walk (local dispatch), or another run's first, taken by the batch.
      const next = settled.claimed ?? settled.taken;
      return { result: { kind }, error: request.error, ...(next ? { next } : {}) };
    } finally {
      clearInterval(heartbeat);
      this.inFlight.delete(step.id);
    }
  }

  /**
   * Extends the step's lease every beat while this attempt holds it (and its effect's with it); a beat that finds the
   * lease lost stops the step.
   */
  private beat(step: ClaimedStep, controller: AbortController, slog: Logger): NodeJS.Timeout {
    return setInterval(() => {
      stepsHeartbeatIfToken(this.sql, step.id, step.attempt, this.lane.leaseMs)
        .then((n) => {
          if (n === 1) {
            // The effect's lease lives exactly as long as the step's: extended only by a heartbeat that held.
            effectsHeartbeat(this.deps.db, step.orgId, effectKey(step.runId, step.nodeId, step.iteration), effectOwner(step), this.lane.leaseMs).catch(() => {});
          }
          if (n === 0 && !controller.signal.aborted) {
            slog.warn("heartbeat changed 0 rows: lease lost, stopping the step");
            controller.abort(new LeaseLostError(step.id, step.attempt));
          }
        })
        .catch((error) => {
          if (!this.deps.outages?.report(error)) slog.warn({ err: error }, "heartbeat failed; retrying at the next beat");
        });
    }, this.lane.heartbeatMs);
  }

  private async perform(step: ClaimedStep, graph: Graph, signal: AbortSignal): Promise<StepOutcome> {
    const handler = (this.deps.handlers ?? defaultHandlers)[step.kind];
    if (!handler) return { kind: "fail", error: { code: "unknown_kind", message: `no handler for ${step.kind} on this worker` } };
    try {
      const node = graph.nodes.find((n) => n.id === step.nodeId);
      if (!node) return { kind: "fail", error: { code: "missing_node", message: `node ${step.nodeId} not in version` } };
      return await handler({ db: this.deps.db, step, node, signal, leaseMs: this.lane.leaseMs });
    } catch (error) {
      // A destination the egress guard refused stays refused, however it surfaced: permanent, never retried.
      const refused = egressRefusalOf(error);
      if (refused) return { kind: "fail", error: egressStepError(refused) };
      // An unexpected throw is treated as transient: the step is retried within its attempts, never lost.
      return { kind: "retry", error: { code: "handler_error", message: (error as Error).message } };
    }
  }

  /**
   * A provider's definite answer is never thrown away: if the step cannot settle, the effect still records it. A
   * claim the step never used (the provider was not called) is given back.
   */
  private async keepAnswer(step: ClaimedStep, outcome: StepOutcome): Promise<void> {
    if (unusedClaim(step)) {
      await effectsRelease(this.deps.db, step.orgId, effectKey(step.runId, step.nodeId, step.iteration), effectOwner(step)).catch(() => {});
      return;
    }
    if ((outcome.kind !== "done" && outcome.kind !== "fail") || !outcome.effect) return;
    const { orgId, key, owner } = outcome.effect;
    await effectsSettle(this.deps.db, orgId, key, owner, outcome.kind === "done" ? storable(outcome.output) : null, outcome.kind === "fail" ? storable(outcome.error) : null).catch(() => {});
  }

  private async afterAbort(step: ClaimedStep, reason: unknown, slog: Logger): Promise<RunStepResult> {
    if (reason instanceof ShutdownAbort) {
      const n = await stepsReleaseIfToken(this.deps.db, step, this.deps.worker, stepReady(step));
      slog.info({ released: n }, "released step at shutdown");
      return { kind: n ? "released" : "lease_lost" };
    }
    slog.warn("lease lost during the step: stopped without settling");
    return { kind: "lease_lost" };
  }

  /** Shutdown after the grace period: abort what is still running; each aborted step releases its lease. */
  abortAll(): number {
    for (const { controller } of this.inFlight.values()) controller.abort(new ShutdownAbort());
    return this.inFlight.size;
  }
}

/**
 * The settle an attempt's outcome asks for (without the walk after it): its status, the effect's answer recorded with
 * it (or the unused claim given back), a skip or a deferral on the timeline, and the step's own wake-up when it goes
 * back to ready or parks.
 */
function settleRequestFor(step: ClaimedStep, worker: string, outcome: StepOutcome, settlement: ReturnType<typeof settlementFor>): RunSettleRequest {
  const effect =
    (outcome.kind === "done" || outcome.kind === "fail") && outcome.effect
      ? { ...outcome.effect, result: outcome.kind === "done" ? storable(outcome.output) : null, error: outcome.kind === "fail" ? storable(outcome.error) : null }
      : unusedClaim(step)
        ? { orgId: step.orgId, key: effectKey(step.runId, step.nodeId, step.iteration), owner: effectOwner(step), result: null, error: null, release: true }
        : null;
  const request: RunSettleRequest =
    settlement.kind === "retry"
      ? { step, worker, status: "ready", error: settlement.error, delayMs: settlement.delayMs }
      : settlement.kind === "settle"
        ? { step, worker, status: "done", output: settlement.output }
        : settlement.kind === "park"
          ? { step, worker, status: "parked", error: settlement.error }
          : settlement.kind === "defer"
            ? { step, worker, status: "ready", delayMs: settlement.delayMs, event: { type: "step.deferred", data: { reason: settlement.reason, delayMs: Math.round(settlement.delayMs), ...(settlement.hold ? { hold: settlement.hold } : {}) } } }
            : { step, worker, status: "failed", error: settlement.error };
  request.effect = effect;
  if (outcome.kind === "done" && outcome.skipped) request.event = { type: "step.skipped", data: { reason: outcome.skipped.reason } };
  if (request.status === "ready" || request.status === "parked") request.retry = stepReady(step);
  return request;
}

/** What a settled attempt answers the queue job. */
function settledKind(request: RunSettleRequest): "settled" | "deferred" | "retry_scheduled" | "parked" | "failed" {
  return request.status === "done"
    ? "settled"
    : request.event?.type === "step.deferred"
      ? "deferred"
      : request.status === "ready"
        ? "retry_scheduled"
        : request.status === "parked"
          ? "parked"
          : "failed";
}
