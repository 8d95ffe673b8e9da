import { Prisma, type Tx } from "@holdfast/db";
import type { LaneName } from "../../base/catalog";
import type { EffectClaimOrRead } from "./effects";
import type { StepState } from "../../base/types/steps";

/**
 * The step rows as the walk reads and writes them (insert, read, mark advanced, cancel), and a waiting step's own.
 * The other statements on steps have a file each by job: steps-claim.ts (claim, take, heartbeat, release),
 * steps-settle.ts, steps-sweep.ts (the sweeper's), steps-retry.ts, steps-review.ts (a person's action) and
 * steps-view.ts (pages and counts). Every write by a lease holder is fenced by its attempt number (the token from the
 * claim), and every transition that changes what happens next writes its outbox row and timeline row in the same
 * statement (data-modifying CTEs commit together or not at all).
 */

/** A new step row; its id is made by the applier (run/apply/rows.ts) so its wake-up and timeline rows can name it. */
export interface NewStep {
  id: string;
  orgId: string;
  runId: string;
  nodeId: string;
  iteration: number;
  /** A step kind (versions/kinds/registry.ts; a kind registered at start-up too). */
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

/** A step as the walk sees it (decide/walk/walk.ts), read straight from the table. */
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
  /** The run is a test run: its effects are simulated (run/connectors/simulate.ts), never sent. */
  test?: boolean;
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

/** The step fails now with this error (a reviewed step given up, content that cannot be rendered). */
export function stepsFail(tx: Tx, stepId: string, error: unknown): Promise<number> {
  return tx.$executeRaw`
    UPDATE steps SET status = 'failed', settled_at = now(), updated_at = now(), error = ${JSON.stringify(error)}::jsonb
    WHERE id = ${stepId}`;
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
