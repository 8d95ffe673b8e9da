import { type Db, Prisma, type Sql, type Tx } from "@holdfast/db";
import type { LaneName } from "../catalog";
import type { EffectClaimOrRead } from "./effects";
import { pgErrorCode } from "../errors";
import type { OutboxRow } from "./outbox";
import type { PlanRows } from "./plan-rows";
import type { StepState } from "../types/steps";

/**
 * Step transitions. Every write by a lease holder is fenced by its attempt number (the token from the claim), and
 * every transition that changes what happens next writes its outbox row and timeline row in the same statement
 * (data-modifying CTEs commit together or not at all).
 */

/** A new step row; its id is made by the applier (apply/rows.ts) so its wake-up and timeline rows can name it. */
export interface NewStep {
  id: string;
  orgId: string;
  runId: string;
  nodeId: string;
  iteration: number;
  /** A step kind (kinds/registry.ts; a kind registered at start-up too). */
  kind: string;
  lane: LaneName;
  maxAttempts: number;
  status: "ready" | "waiting" | "running";
}

/** Inserts steps; one already there for its (run, node, iteration) is skipped and not returned. */
export function stepsInsert(tx: Tx, steps: NewStep[]): Promise<{ id: string; nodeId: string; lane: LaneName }[]> {
  const values = steps.map(
    (s) => Prisma.sql`(${s.id}, ${s.orgId}, ${s.runId}, ${s.nodeId}, ${s.iteration}, ${s.kind}, ${s.lane}, ${s.maxAttempts}, ${s.status})`,
  );
  return tx.$queryRaw`
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status)
    VALUES ${Prisma.join(values)}
    ON CONFLICT (run_id, node_id, iteration) DO NOTHING
    RETURNING id, node_id AS "nodeId", lane`;
}

/** A step as the walk sees it (walk/walk.ts), read straight from the table. */
export type StepRow = StepState;

export function stepsForRun(tx: Tx, orgId: string, runId: string): Promise<StepRow[]> {
  return tx.$queryRaw<StepRow[]>`
    SELECT id, node_id AS "nodeId", iteration, status, output, error,
           advanced_at IS NOT NULL AS advanced,
           (status = 'running' AND lease_until >= now()) AS leased
    FROM steps WHERE org_id = ${orgId} AND run_id = ${runId}
    ORDER BY created_at, id`;
}

/** The steps of many runs (as `stepsForRun` reads one), by run. */
export async function stepsForRuns(tx: Tx, runs: { orgId: string; runId: string }[]): Promise<Map<string, StepRow[]>> {
  const byRun = new Map<string, StepRow[]>();
  if (runs.length === 0) return byRun;
  const rows = await tx.$queryRaw<(StepRow & { runId: string })[]>`
    SELECT run_id AS "runId", id, node_id AS "nodeId", iteration, status, output, error,
           advanced_at IS NOT NULL AS advanced,
           (status = 'running' AND lease_until >= now()) AS leased
    FROM steps
    WHERE (org_id, run_id) IN (SELECT * FROM unnest(${runs.map((r) => r.orgId)}::text[], ${runs.map((r) => r.runId)}::text[]))
    ORDER BY run_id, created_at, id`;
  for (const { runId, ...step } of rows) {
    const own = byRun.get(runId);
    if (own) own.push(step);
    else byRun.set(runId, [step]);
  }
  return byRun;
}

export function stepsMarkAdvanced(tx: Tx, stepIds: string[]): Promise<number> {
  return tx.$executeRaw`UPDATE steps SET advanced_at = now() WHERE id = ANY(${stepIds}::text[]) AND advanced_at IS NULL`;
}

export async function stepsCancelOpen(tx: Tx, stepIds: string[]): Promise<number> {
  // A cancelled wait's timer is closed too, so it neither fires later nor counts as overdue.
  await tx.$executeRaw`
    UPDATE timers SET fired_at = now(), fired_by = 'cancelled', lateness_ms = 0, updated_at = now()
    WHERE step_id = ANY(${stepIds}::text[]) AND fired_at IS NULL`;
  return tx.$executeRaw`
    UPDATE steps SET status = 'cancelled', owner = NULL, lease_until = NULL, updated_at = now(),
                     settled_at = now(), advanced_at = now()
    WHERE id = ANY(${stepIds}::text[]) AND status IN ('ready', 'running', 'waiting', 'parked')`;
}

export interface ClaimedStep {
  id: string;
  orgId: string;
  runId: string;
  nodeId: string;
  iteration: number;
  kind: string;
  lane: LaneName;
  /** The fencing token: only this attempt may heartbeat or settle. */
  attempt: number;
  maxAttempts: number;
  /** Times the step was given back unstarted for want of a connection slot (not attempts). */
  deferrals?: number;
  versionId: string;
  input: unknown;
  /** The run's budgets as the claim read them: steps it may execute (null: no limit), age limit passed. */
  maxSteps?: number | null;
  expired?: boolean;
  /** The run's seq and steps as they were at the claim: the state a worker's inline walk starts from. */
  runSeq: bigint;
  runSteps: StepRow[];
  /** For effect kinds: the ledger's claim-or-read of this attempt's effect key, made in the claim's commit. */
  effect?: EffectClaimOrRead | null;
  /** The run is a test run: its effects are simulated (connectors/simulate.ts), never sent. */
  test?: boolean;
}

/**
 * Takes the step if nobody holds a live lease, it is due, and its run is still running and not being cancelled.
 * The attempt number it returns is the worker's fencing token. The claim is on the timeline (extra attempts show).
 */
export async function stepsClaimIfLeaseFree(
  sql: Sql,
  stepId: string,
  worker: string,
  leaseMs: number,
  /** The kinds whose claim also claims the effect key (kinds/registry.ts effectKinds). */
  effectKinds: readonly string[],
  /** A held wake-up this worker is fulfilling itself (local dispatch): marked sent with the claim. */
  outboxId?: string,
): Promise<ClaimedStep | undefined> {
  // holdfast_step_claim (sql/functions/step_claim.sql): the fenced UPDATE, its timeline row, the
  // effect claim for effect kinds, the held outbox row marked sent, and the run's seq, input and steps, in one
  // planned-once statement.
  const { rows } = await sql.query<{ claimed: RawClaim | null }>({
    name: "holdfast_step_claim",
    text: "SELECT holdfast_step_claim($1::text, $2::text, $3::float8, $4::bigint, $5::text[]) AS claimed",
    values: [stepId, worker, leaseMs, outboxId ?? null, effectKinds],
  });
  const raw = rows[0]?.claimed;
  // The function read the steps after its UPDATE, so this step already shows as running and leased.
  return raw ? fromRawClaim(raw) : undefined;
}

/**
 * First-step dispatch by LISTEN: takes up to `limit` due step.ready rows of `lane` from the outbox and claims their
 * steps for `worker`, in one statement and one commit (holdfast_steps_take_ready, sql/functions/steps_take_ready.sql).
 * Returns how many rows it took and the steps it claimed; a taken row whose step could not be claimed is marked sent
 * and left out (the step's own row decides; the sweeper re-wakes a ready step nobody claimed).
 */
export async function stepsTakeReady(
  sql: Sql,
  lane: string,
  limit: number,
  worker: string,
  leaseMs: number,
  effectKinds: readonly string[],
): Promise<{ taken: number; claimed: ClaimedStep[]; more: boolean }> {
  const { rows } = await sql.query<{ taken: { taken: number; claimed: RawClaim[]; more?: boolean } | null }>({
    name: "holdfast_steps_take_ready",
    text: "SELECT holdfast_steps_take_ready($1::text, $2::int, $3::text, $4::float8, $5::text[], false) AS taken",
    values: [lane, limit, worker, leaseMs, effectKinds],
  });
  const taken = rows[0]?.taken;
  return { taken: taken?.taken ?? 0, claimed: (taken?.claimed ?? []).map(fromRawClaim), more: taken?.more ?? false };
}

/**
 * Runs the hot path's named statements once on a new connection with arguments that match nothing (a take of no
 * rows, a claim and a heartbeat of no step, a batch of no settles), so each is parsed and planned, and its function
 * compiled, before a step needs it. Reads only: it changes no row.
 */
export async function stepsWarm(sql: Sql, lane: string, worker: string, leaseMs: number, effectKinds: readonly string[]): Promise<void> {
  await stepsTakeReady(sql, lane, 0, worker, leaseMs, effectKinds);
  await stepsClaimIfLeaseFree(sql, "", worker, leaseMs, effectKinds);
  await stepsHeartbeatIfToken(sql, "", 0, leaseMs);
  await stepsSettleManyIfToken(sql, []);
}

type RawClaim = Omit<ClaimedStep, "runSeq"> & { runSeq: string };
const fromRawClaim = (raw: RawClaim): ClaimedStep => ({ ...raw, runSeq: BigInt(raw.runSeq) });

/** Milliseconds until a ready step is due by the database clock (0 when due), or undefined if it is not ready. */
export async function stepsReadyDueInMs(tx: Tx, stepId: string): Promise<number | undefined> {
  const rows = await tx.$queryRaw<{ ms: number }[]>`
    SELECT GREATEST(0, EXTRACT(EPOCH FROM (available_at - now())) * 1000)::float8 AS ms
    FROM steps WHERE id = ${stepId} AND status = 'ready'`;
  return rows[0]?.ms;
}

/** Extends the lease only while this attempt holds it. 0 rows: the lease was lost, stop working. */
export async function stepsHeartbeatIfToken(sql: Sql, stepId: string, token: number, leaseMs: number): Promise<number> {
  const { rows } = await sql.query<{ n: number }>({
    name: "holdfast_step_heartbeat",
    text: `WITH beat AS (
             UPDATE steps SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
             WHERE id = $1::text AND attempt = $2::int AND status = 'running' RETURNING 1)
           SELECT count(*)::int AS n FROM beat`,
    values: [stepId, token, leaseMs],
  });
  return rows[0]?.n ?? 0;
}

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
   * The step's own wake-up (apply/rows.ts `stepReady`), written due after delayMs when it goes back to ready (a
   * retry, a deferral, a park whose cause cleared while it ran).
   */
  retry?: OutboxRow | null;
  /**
   * The walk from the state seen at claim, as the applier's rows (apply/inline.ts), inserted only if the run's seq is
   * still `runSeq`. A step in them inserted already claimed by this worker (local dispatch) comes back as `claimed`.
   */
  advance?: {
    runSeq: bigint;
    rows: PlanRows;
    /**
     * The run's steps after these rows, as the worker knows them (apply/inline.ts stepsAfterSettle): the step they
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
 * A settle batch's take (holdfast_step_settle_many's second argument): the lane's due first steps claimed for the
 * slots the batch frees, in the batch's commit.
 */
export interface TakeAfterSettle {
  lane: string;
  worker: string;
  leaseMs: number;
  effectKinds: readonly string[];
}

/**
 * Group commit: settles many steps in one statement and one commit (holdfast_step_settle_many), each fenced by its
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
    name: "holdfast_step_settle_many",
    text: "SELECT holdfast_step_settle_many($1::jsonb, $2::jsonb) AS result",
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

/** A settle's arguments by name (holdfast_step_settle's, in order; holdfast_step_settle_many's items). */
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

/**
 * Shutdown: give the step back at once (lease_until = now) so another worker takes it without waiting, with its
 * wake-up (`wake`: the step's step.ready row, apply/rows.ts stepReady).
 */
export function stepsReleaseIfToken(tx: Tx, step: Pick<ClaimedStep, "id" | "attempt">, worker: string, wake: OutboxRow): Promise<number> {
  return fencedTransition(tx, step, worker, {
    set: Prisma.sql`status = 'ready', available_at = now()`,
    event: "step.released",
    data: { reason: "worker shutting down" },
    wake,
  });
}

interface Transition {
  set: Prisma.Sql;
  event: string;
  data: Record<string, unknown> | null;
  /** The outbox row written with the transition (who is woken, and when). */
  wake: OutboxRow;
}

async function fencedTransition(
  tx: Tx,
  step: Pick<ClaimedStep, "id" | "attempt">,
  worker: string,
  t: Transition,
): Promise<number> {
  const rows = await tx.$queryRaw<{ n: bigint }[]>`
    WITH moved AS (
      UPDATE steps SET ${t.set}, owner = NULL, lease_until = NULL, updated_at = now()
      WHERE id = ${step.id} AND attempt = ${step.attempt} AND status = 'running'
      RETURNING id, org_id, run_id, node_id, attempt, lane
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
      SELECT org_id, run_id, ${t.wake.topic}, ${JSON.stringify(t.wake.payload)}::jsonb,
             now() + make_interval(secs => ${(t.wake.delayMs ?? 0) / 1000})
      FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
      SELECT org_id, run_id, id, node_id, attempt, ${t.event}, lane, ${worker},
             ${t.data ? JSON.stringify(t.data) : null}::jsonb
      FROM moved
    )
    SELECT count(*) AS n FROM moved`;
  return Number(rows[0]?.n ?? 0);
}

/**
 * The sweeper's common tail: each step in the `moved` CTE gets a fresh step.ready outbox row and a timeline row,
 * in the same statement.
 */
function wakeMoved(event: string): Prisma.Sql {
  return Prisma.sql`, wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'step.ready',
             jsonb_build_object('orgId', org_id, 'runId', run_id, 'stepId', id, 'lane', lane)
      FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker)
      SELECT org_id, run_id, id, node_id, attempt, ${event}, lane, 'sweeper' FROM moved
    )
    SELECT id AS "stepId", org_id AS "orgId", run_id AS "runId", lane FROM moved`;
}

export interface StepWake {
  orgId: string;
  runId: string;
  stepId: string;
  lane: LaneName;
}

/**
 * Sweeper: steps whose lease lapsed (the worker died or hung) go back to ready and get a fresh wake-up. The old
 * attempt can no longer heartbeat or settle: both require status = 'running' and its token.
 */
export function stepsReclaimExpired(tx: Tx, limit: number): Promise<StepWake[]> {
  return tx.$queryRaw<StepWake[]>`
    WITH expired AS (
      SELECT id FROM steps
      WHERE status = 'running' AND lease_until < now()
      ORDER BY lease_until
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), moved AS (
      UPDATE steps s SET status = 'ready', owner = NULL, lease_until = NULL, available_at = now(),
                         updated_at = now(), woken_at = now()
      FROM expired e WHERE s.id = e.id
      RETURNING s.id, s.org_id, s.run_id, s.node_id, s.attempt, s.lane
    )${wakeMoved("step.lease_expired")}`;
}

/**
 * Sweeper: ready steps that have been due for longer than `staleSeconds` without a claim. Their wake-up was lost
 * (Redis restart, a dropped job) or is still waiting in an unsent outbox row (then they are skipped).
 */
export function stepsRewakeStale(tx: Tx, staleSeconds: number, limit: number): Promise<StepWake[]> {
  return tx.$queryRaw<StepWake[]>`
    WITH stale AS (
      SELECT s.id FROM steps s
      WHERE s.status = 'ready'
        AND s.available_at < now() - make_interval(secs => ${staleSeconds})
        AND s.updated_at < now() - make_interval(secs => ${staleSeconds})
        AND (s.woken_at IS NULL OR s.woken_at < now() - make_interval(secs => ${staleSeconds}))
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = s.run_id AND o.sent_at IS NULL)
        -- Steps of a run being cancelled are nobody's to claim: runsFindStalled hands the run to the engine.
        AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.cancel_requested_at IS NOT NULL)
      ORDER BY s.available_at
      LIMIT ${limit}
      FOR UPDATE OF s SKIP LOCKED
    ), moved AS (
      UPDATE steps s SET woken_at = now() FROM stale WHERE s.id = stale.id
      RETURNING s.id, s.org_id, s.run_id, s.node_id, s.attempt, s.lane
    )${wakeMoved("step.rewoken")}`;
}

export interface FailedStep {
  id: string;
  nodeId: string;
  iteration: number;
  kind: string;
  lane: LaneName;
  attempt: number;
  maxAttempts: number;
  error: Record<string, unknown> | null;
}

/** The run's failed step at `nodeId` (its latest iteration), locked: what Retry from the failed step reopens. */
export async function stepsFailedAt(tx: Tx, orgId: string, runId: string, nodeId: string): Promise<FailedStep | null> {
  const rows = await tx.$queryRaw<FailedStep[]>`
    SELECT id, node_id AS "nodeId", iteration, kind, lane, attempt, max_attempts AS "maxAttempts", error
    FROM steps WHERE org_id = ${orgId} AND run_id = ${runId} AND node_id = ${nodeId} AND status = 'failed'
    ORDER BY iteration DESC LIMIT 1 FOR UPDATE`;
  return rows[0] ?? null;
}

/**
 * Retry from the failed step: a new round of `attempts` attempts, due now, not yet walked on from. The attempt
 * counter keeps counting (it is the lease's fencing token), so the budget is raised past it, not reset.
 */
export async function stepsReopenFailed(tx: Tx, stepId: string, attempts: number): Promise<boolean> {
  return (
    (await tx.$executeRaw`
      UPDATE steps SET status = 'ready', error = NULL, output = NULL, settled_at = NULL, advanced_at = NULL,
                       available_at = now(), max_attempts = attempt + ${attempts}, updated_at = now()
      WHERE id = ${stepId} AND status = 'failed'`) === 1
  );
}

/** A version migration's rename: the run's steps of one node keep their history under the new id. */
export function stepsRenameNode(tx: Tx, orgId: string, runId: string, fromNodeId: string, toNodeId: string): Promise<number> {
  return tx.$executeRaw`UPDATE steps SET node_id = ${toNodeId} WHERE org_id = ${orgId} AND run_id = ${runId} AND node_id = ${fromNodeId}`;
}

/** The run's step waiting on a node (a wait), if any. */
export async function stepsWaitingAt(tx: Tx, runId: string, nodeId: string): Promise<string | undefined> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM steps WHERE run_id = ${runId} AND node_id = ${nodeId} AND status = 'waiting'`;
  return rows[0]?.id;
}

export interface ParkedStepRow {
  id: string;
  nodeId: string;
  status: string;
  error: { code?: string; key?: string } | null;
}

/** One step of the run, locked (a person's action on it). */
export async function stepsLockOfRun(tx: Tx, orgId: string, runId: string, stepId: string): Promise<ParkedStepRow | undefined> {
  const rows = await tx.$queryRaw<ParkedStepRow[]>`
    SELECT id, node_id AS "nodeId", status, error FROM steps WHERE org_id = ${orgId} AND run_id = ${runId} AND id = ${stepId} FOR UPDATE`;
  return rows[0];
}

/** A reviewed step is done with the person's record as its output. */
export function stepsSettleReviewedDone(tx: Tx, stepId: string, output: unknown): Promise<number> {
  return tx.$executeRaw`
    UPDATE steps SET status = 'done', output = ${JSON.stringify(output)}::jsonb, settled_at = now(), updated_at = now()
    WHERE id = ${stepId}`;
}

/** A reviewed step runs again now; its lane (for the wake-up). */
export async function stepsReadyAgainAfterReview(tx: Tx, stepId: string): Promise<string | undefined> {
  await tx.$executeRaw`
    UPDATE steps SET status = 'ready', error = NULL, available_at = now(), updated_at = now() WHERE id = ${stepId}`;
  const rows = await tx.$queryRaw<{ lane: string }[]>`SELECT lane FROM steps WHERE id = ${stepId}`;
  return rows[0]?.lane;
}

/** The step fails now with this error (a reviewed step given up, content that cannot be rendered). */
export function stepsFail(tx: Tx, stepId: string, error: unknown): Promise<number> {
  return tx.$executeRaw`
    UPDATE steps SET status = 'failed', settled_at = now(), updated_at = now(), error = ${JSON.stringify(error)}::jsonb
    WHERE id = ${stepId}`;
}

/** The run's parked steps back to ready now, except those waiting for a review. */
export function stepsResumeParkedOfRun(tx: Tx, orgId: string, runId: string): Promise<{ id: string; nodeId: string; lane: string; reason: string | null }[]> {
  return tx.$queryRaw<{ id: string; nodeId: string; lane: string; reason: string | null }[]>`
    UPDATE steps SET status = 'ready', available_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND run_id = ${runId} AND status = 'parked' AND COALESCE(error->>'code', '') <> 'needs_review'
    RETURNING id, node_id AS "nodeId", lane, error->>'reason' AS reason`;
}

/** Per lane: due ready steps and how long the oldest has waited (seconds), running and parked steps. */
export function stepsCountByLane(db: Db | Tx): Promise<{ lane: string; ready: number; oldest: number; running: number; parked: number }[]> {
  return db.$queryRaw<{ lane: string; ready: number; oldest: number; running: number; parked: number }[]>`
    SELECT lane,
           count(*) FILTER (WHERE status = 'ready' AND available_at <= now())::int AS ready,
           COALESCE(EXTRACT(EPOCH FROM now() - min(available_at) FILTER (WHERE status = 'ready' AND available_at <= now())), 0)::float8 AS oldest,
           count(*) FILTER (WHERE status = 'running')::int AS running,
           count(*) FILTER (WHERE status = 'parked')::int AS parked
    FROM steps WHERE status IN ('ready', 'running', 'parked') GROUP BY lane`;
}

export interface LostWaitRow {
  id: string;
  orgId: string;
  runId: string;
  nodeId: string;
  versionId: string;
  input: unknown;
  createdAt: Date;
  deadlineAt: Date | null;
}

/** Waiting steps of running runs with no unfired timer (nothing will wake them), oldest first, with the approval's deadline. */
export function stepsWaitingWithoutTimer(db: Db | Tx, limit: number): Promise<LostWaitRow[]> {
  return db.$queryRaw<LostWaitRow[]>`
    SELECT s.id, s.org_id AS "orgId", s.run_id AS "runId", s.node_id AS "nodeId", r.version_id AS "versionId", r.input,
           s.created_at AS "createdAt", a.deadline_at AS "deadlineAt"
    FROM steps s JOIN runs r ON r.id = s.run_id LEFT JOIN approvals a ON a.step_id = s.id
    WHERE s.status = 'waiting' AND r.status = 'running'
      AND NOT EXISTS (SELECT 1 FROM timers t WHERE t.step_id = s.id AND t.fired_at IS NULL)
    ORDER BY s.created_at LIMIT ${limit}`;
}

/** Locks the step if it is still waiting. */
export async function stepsLockIfWaiting(tx: Tx, stepId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM steps WHERE id = ${stepId} AND status = 'waiting' FOR UPDATE`;
  return rows.length > 0;
}

/** Records the step's output while it stays open (an approval's stage). */
export function stepsSetOutput(tx: Tx, stepId: string, output: unknown): Promise<number> {
  return tx.$executeRaw`UPDATE steps SET output = ${JSON.stringify(output)}::jsonb WHERE id = ${stepId}`;
}

/** Steps of the organisation parked because the model budget ran out. */
export async function stepsCountParkedForBudget(db: Db | Tx, orgId: string): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM steps WHERE org_id = ${orgId} AND status = 'parked' AND error->>'code' = 'budget_exhausted'`;
  return rows[0]?.n ?? 0;
}

/** A step as the run page shows it. */
export interface StepView {
  id: string;
  nodeId: string;
  iteration: number;
  kind: string;
  lane: string;
  status: string;
  attempt: number;
  maxAttempts: number;
  /** Times given back unstarted for want of a connection slot: `attempt` counts them, real attempts do not. */
  deferrals: number;
  owner: string | null;
  leaseUntil: Date | null;
  availableAt: Date;
  output: unknown;
  error: { code?: string; message?: string; reason?: string; key?: string } | null;
  createdAt: Date;
  settledAt: Date | null;
}

export function stepsViewOfRun(db: Db | Tx, orgId: string, runId: string): Promise<StepView[]> {
  return db.$queryRaw<StepView[]>`
    SELECT id, node_id AS "nodeId", iteration, kind, lane, status, attempt, max_attempts AS "maxAttempts", deferrals, owner,
           lease_until AS "leaseUntil", available_at AS "availableAt", output, error, created_at AS "createdAt", settled_at AS "settledAt"
    FROM steps WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY created_at, id`;
}
