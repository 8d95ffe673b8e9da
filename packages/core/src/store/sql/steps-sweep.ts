import { type Db, Prisma, type Tx } from "@holdfast/db";
import type { LaneName } from "../../base/catalog";

/** The sweeper's repairs of steps: lapsed leases, lost wake-ups, waits nothing will wake. */

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
