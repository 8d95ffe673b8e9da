import type { Sql } from "@holdfast/db";
import type { LaneName } from "../../base/catalog";
import { pgErrorCode } from "../../base/errors";
import type { OutboxRow } from "./outbox";
import type { PlanRows } from "./plan-rows";
import type { ClaimedStep, StepRow } from "./steps";
import { fromRawClaim, type RawClaim } from "./steps-claim";

/** A step's outcome recorded by the attempt that holds it, one at a time or many in one commit, with what happens next. */

export interface SettleRequest {
  step: Pick<ClaimedStep, "id" | "attempt">;
  worker: string;
  /** done: the result; failed: for good; ready: another attempt after delayMs; parked: waits for a person. */
  status: "done" | "failed" | "ready" | "parked";
  /** The timeline row, when it is not the status's own (step.skipped). */
  event?: { type: string; data: Record<string, unknown> | null };
  output?: unknown;
  error?: Record<string, unknown> | null;
  delayMs?: number;
  /**
   * The step's own wake-up (run/apply/rows.ts `stepReady`), written due after delayMs when it goes back to ready (a
   * retry, a deferral, a park whose cause cleared while it ran).
   */
  retry?: OutboxRow | null;
  /**
   * The walk from the state seen at claim, as the applier's rows (run/apply/inline.ts), inserted only if the run's seq is
   * still `runSeq`. A step in them inserted already claimed by this worker (local dispatch) comes back as `claimed`.
   */
  advance?: {
    runSeq: bigint;
    rows: PlanRows;
    /**
     * The run's steps after these rows, as the worker knows them (run/apply/inline.ts stepsAfterSettle): the step they
     * claimed starts its walk from them, and the settle does not read them back (holdfast_run_steps).
     */
    stepsAfter?: StepRow[] | null;
  } | null;
  /**
   * The effect this attempt performed: its answer is recorded in the same commit, fenced by its owner token. With
   * `release`, the attempt claimed the key but never called the provider: the claim is given back.
   */
  effect?: { orgId: string; key: string; owner: string; result: unknown; error: unknown; release?: boolean } | null;
}

/**
 * A settle that knows its step's run (a batch sorts by it). `take`: if it claims no next step, its slot may run a
 * first step the batch takes (stepsSettleManyIfToken).
 */
export type RunSettleRequest = SettleRequest & { step: Pick<ClaimedStep, "id" | "attempt" | "runId">; take?: boolean };

export interface SettleResult {
  /** false: a newer attempt holds the step (the fence refused the write). */
  changed: boolean;
  /** true: the run moved on in the same transaction; false: a run.wake was written for the engine. */
  advanced?: boolean;
  steps?: { id: string; nodeId: string; lane: LaneName }[];
  /** The next step, already claimed by this worker (local dispatch). */
  claimed?: ClaimedStep | null;
  /** A first step of another run, taken from the outbox and claimed for this worker in the settle's commit. */
  taken?: ClaimedStep;
  /**
   * The walk's rows named another run (HF005 from holdfast_rows_insert, a defect of the applier): none was written,
   * and the step settled without them, its run left to the engine's walk (a run.wake), which writes from the run it locks.
   */
  walkRefused?: boolean;
}

const settleEvent = { done: "step.succeeded", failed: "step.failed", ready: "step.retry_scheduled", parked: "step.parked" } as const;

/**
 * Records the outcome only if this attempt still holds the step (status running, attempt = token), with its
 * timeline row and what happens next (the walk's rows, a run.wake, or its delayed step.ready), in one commit.
 */
export async function stepsSettleIfToken(sql: Sql, r: SettleRequest): Promise<SettleResult> {
  const a = settleArguments(r);
  let rows: { result: RawSettle }[];
  try {
    ({ rows } = await sql.query<{ result: RawSettle }>({
      name: "holdfast_step_settle",
      text: `SELECT holdfast_step_settle($1::text, $2::int, $3::text, $4::text, $5::jsonb, $6::jsonb, $7::float8, $8::text,
               $9::jsonb, $10::bigint, $11::jsonb, $12::jsonb, $13::jsonb) AS result`,
      values: [
        a.stepId,
        a.token,
        a.worker,
        a.status,
        JSON.stringify(a.output),
        a.error ? JSON.stringify(a.error) : null,
        a.delayMs,
        a.event,
        a.eventData ? JSON.stringify(a.eventData) : null,
        a.runSeq ?? null,
        a.rows ? JSON.stringify(a.rows) : null,
        a.retry ? JSON.stringify(a.retry) : null,
        a.effect ? JSON.stringify(a.effect) : null,
      ],
    }));
  } catch (error) {
    // HF002: the effect was taken over by a newer attempt; HF003: the step was (after the run had been moved on in
    // the same statement, which is undone). Either way this attempt's settle is refused as a whole.
    const code = pgErrorCode(error);
    if (code === "HF002" || code === "HF003") return { changed: false };
    // HF005: the walk's rows named another run. The same walk would be refused every time, so the outcome is
    // recorded without it and the engine walks the run instead (nothing of the refused statement was written).
    if (code === "HF005" && r.advance) return { ...(await stepsSettleIfToken(sql, { ...r, advance: null })), walkRefused: true };
    throw error;
  }
  return settleResult(r, rows[0]?.result);
}

/**
 * A settle batch's take (holdfast_step_settle_batch's second argument): the lane's due first steps claimed for the
 * slots the batch frees, in the batch's commit.
 */
export interface TakeAfterSettle {
  lane: string;
  worker: string;
  leaseMs: number;
  effectKinds: readonly string[];
}

/**
 * Group commit: settles many steps in one statement and one commit (holdfast_step_settle_batch), each fenced by its
 * own attempt exactly as stepsSettleIfToken would: a stale one answers `changed: false` and its neighbours settle.
 * The items go sorted by run, so concurrent batches lock runs in one order. Answers come back in the requests' order.
 * With `take`, each request that asked to (`take: true`), settled and claimed no next step may come back with a first
 * step of the lane taken from the outbox and claimed for the worker (`taken`), in the same commit; `more` says the
 * take filled every such slot and saw another due row.
 * Any error other than a stale attempt fails the whole batch, nothing of it committed: the caller settles one by one.
 */
export async function stepsSettleManyIfToken(
  sql: Sql,
  requests: RunSettleRequest[],
  take?: TakeAfterSettle | null,
): Promise<{ results: SettleResult[]; looked: boolean; taken: number; more: boolean }> {
  const order = requests.map((r, i) => ({ r, i })).sort((x, y) => (x.r.step.runId < y.r.step.runId ? -1 : x.r.step.runId > y.r.step.runId ? 1 : x.i - y.i));
  const { rows } = await sql.query<{ result: { answers: (RawSettle & { taken?: RawClaim })[]; looked: boolean; taken: number; more: boolean } }>({
    name: "holdfast_step_settle_batch",
    text: "SELECT holdfast_step_settle_batch($1::jsonb, $2::jsonb, true) AS result",
    values: [
      JSON.stringify(order.map(({ r }) => ({ ...settleArguments(r), ...(take && r.take ? { take: true } : {}) }))),
      take ? JSON.stringify(take) : null,
    ],
  });
  const result = rows[0]?.result;
  const answers = result?.answers ?? [];
  const results: SettleResult[] = new Array(requests.length);
  order.forEach(({ r, i }, k) => {
    const answer = answers[k];
    const settled = settleResult(r, answer);
    results[i] = answer?.taken && settled.changed ? { ...settled, taken: fromRawClaim(answer.taken) } : settled;
  });
  return { results, looked: result?.looked ?? false, taken: result?.taken ?? 0, more: result?.more ?? false };
}

/** A settle's arguments by name (holdfast_step_settle's, in order; holdfast_step_settle_batch's items). */
function settleArguments(r: SettleRequest) {
  const eventData =
    r.event?.data ?? (r.status === "done" ? null : { ...(r.error ?? {}), ...(r.status === "ready" ? { delayMs: Math.round(r.delayMs ?? 0) } : {}) });
  return {
    stepId: r.step.id,
    token: r.step.attempt,
    worker: r.worker,
    status: r.status,
    output: r.output ?? null,
    error: r.error ?? undefined,
    delayMs: r.delayMs ?? 0,
    event: r.event?.type ?? settleEvent[r.status],
    eventData: eventData ?? undefined,
    runSeq: r.advance ? String(r.advance.runSeq) : undefined,
    rows: r.advance?.stepsAfter && r.advance.rows.claim ? { ...r.advance.rows, claim: { ...r.advance.rows.claim, runStepsKnown: true } } : r.advance?.rows,
    retry: r.retry ?? undefined,
    effect: r.effect ? { ...r.effect, result: r.effect.result ?? null, error: r.effect.error ?? null } : undefined,
  };
}

function settleResult(r: SettleRequest, result: RawSettle | undefined): SettleResult {
  if (!result?.changed) return { changed: false };
  if (!result.advanced || !r.advance) return { changed: true, advanced: false, steps: [], claimed: null };
  const inserted = r.advance.rows.steps;
  const claim = r.advance.rows.claim;
  const step = claim && inserted.find((s) => s.id === claim.stepId);
  return {
    changed: true,
    advanced: true,
    steps: inserted.map((s) => ({ id: s.id, nodeId: s.nodeId, lane: s.lane })),
    claimed: step && result.claimed ? claimedAtSettle(step, { ...result.claimed, runSteps: result.claimed.runSteps ?? r.advance.stepsAfter ?? [] }) : null,
  };
}

/** What the settle read about the run for a step it inserted already claimed (local dispatch). */
type RawSettle = {
  changed: boolean;
  advanced?: boolean;
  /** runSteps is null when the worker said it knows them (claim.runStepsKnown). */
  claimed?: (Pick<RawClaim, "versionId" | "maxSteps" | "expired" | "input" | "runSeq" | "effect" | "test"> & { runSteps: StepRow[] | null }) | null;
};

/** The step the settle inserted claimed (attempt 1, no deferrals), with the run as its own walk will see it. */
const claimedAtSettle = (step: PlanRows["steps"][number], run: NonNullable<RawSettle["claimed"]> & { runSteps: StepRow[] }): ClaimedStep =>
  fromRawClaim({
    id: step.id,
    orgId: step.orgId,
    runId: step.runId,
    nodeId: step.nodeId,
    iteration: step.iteration,
    kind: step.kind,
    lane: step.lane,
    attempt: 1,
    maxAttempts: step.maxAttempts,
    deferrals: 0,
    ...run,
  });
