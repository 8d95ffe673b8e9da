import type { Tx } from "@holdfast/db";

/** A free slot of the connection for this attempt (holdfast_slot_acquire), or null when all `cap` are held. */
export async function slotsAcquire(tx: Tx, orgId: string, connectionId: string, cap: number, holder: string, leaseMs: number): Promise<number | null> {
  const rows = await tx.$queryRaw<{ slot: number | null }[]>`
    SELECT holdfast_slot_acquire(${orgId}, ${connectionId}, ${cap}::int, ${holder}, ${leaseMs}::float8) AS slot`;
  return rows[0]?.slot ?? null;
}

export function slotsExtend(tx: Tx, connectionId: string, holder: string, leaseMs: number): Promise<number> {
  return tx.$executeRaw`
    UPDATE connection_slots SET lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    WHERE connection_id = ${connectionId} AND holder = ${holder}`;
}

export function slotsRelease(tx: Tx, connectionId: string, holder: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE connection_slots SET holder = NULL, lease_until = NULL WHERE connection_id = ${connectionId} AND holder = ${holder}`;
}

export type BreakerState = "closed" | "open" | "half_open";

/** One call's outcome for the connection's breaker (holdfast_breaker_record); returns the state after it. */
export async function breakerRecord(
  tx: Tx,
  connectionId: string,
  ok: boolean,
  holder: string,
  b: { windowMs: number; minCalls: number; failureRate: number },
): Promise<BreakerState | null> {
  const rows = await tx.$queryRaw<{ state: BreakerState | null }[]>`
    SELECT holdfast_breaker_record(${connectionId}, ${ok}, ${holder}, ${b.windowMs}::float8, ${b.minCalls}::int, ${b.failureRate}::float8) AS state`;
  return rows[0]?.state ?? null;
}

/**
 * After the cool-down, the first attempt to ask becomes the half-open probe. A probe that has not answered within
 * another cool-down (its worker died, it lost its lease) is taken over (breaker_opened_at marks when it started).
 */
export async function breakerTakeProbe(tx: Tx, connectionId: string, holder: string, coolDownMs: number): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE connections SET breaker_state = 'half_open', breaker_probe = ${holder}, breaker_opened_at = now(), updated_at = now()
    WHERE id = ${connectionId} AND breaker_state IN ('open', 'half_open')
      AND breaker_opened_at <= now() - make_interval(secs => ${coolDownMs / 1000})`;
  return n === 1;
}

/** A probe that made no call gives the probe back (open again, past its cool-down: the next attempt may probe). */
export function breakerReleaseProbe(tx: Tx, connectionId: string, holder: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE connections SET breaker_state = 'open', breaker_probe = NULL, updated_at = now()
    WHERE id = ${connectionId} AND breaker_state = 'half_open' AND breaker_probe = ${holder}`;
}

/**
 * Steps parked for `code` (needs_reconnect and breaker_open on a connection; budget_exhausted on the organisation)
 * back to ready with a wake-up and a `step.resumed` row, in one statement. Returns how many.
 */
export async function stepsResumeParked(
  tx: Tx,
  orgId: string,
  on: { code: string; connectionId?: string },
  actor: string,
  limit = 100_000,
): Promise<number> {
  const connectionId = on.connectionId ?? null;
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH candidates AS (
      SELECT id, run_id FROM steps
      WHERE org_id = ${orgId} AND status = 'parked' AND error->>'code' = ${on.code}
        AND (${connectionId}::text IS NULL OR error->>'connectionId' = ${connectionId}::text)
      ORDER BY updated_at LIMIT ${limit}
    ), runs_first AS (
      -- Runs before steps, the engine's and cancel's lock order: a cancel holding a run is waited for, never
      -- deadlocked with (the timeline insert below needs the run).
      SELECT r.id FROM runs r WHERE r.id IN (SELECT run_id FROM candidates) ORDER BY r.id FOR KEY SHARE
    ), picked AS (
      SELECT s.id FROM steps s JOIN candidates c ON c.id = s.id JOIN runs_first rf ON rf.id = s.run_id
      WHERE s.status = 'parked'
      FOR UPDATE OF s SKIP LOCKED
    ), moved AS (
      UPDATE steps s SET status = 'ready', available_at = now(), error = NULL, updated_at = now(), woken_at = now()
      FROM picked WHERE s.id = picked.id
      RETURNING s.id, s.org_id, s.run_id, s.node_id, s.attempt, s.lane
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'step.ready', jsonb_build_object('orgId', org_id, 'runId', run_id, 'stepId', id, 'lane', lane)
      FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
      SELECT org_id, run_id, id, node_id, attempt, 'step.resumed', lane, ${actor},
             jsonb_build_object('was', ${on.code}::text, 'connectionId', ${connectionId}::text)
      FROM moved
    )
    SELECT count(*)::int AS n FROM moved`;
  return rows[0]?.n ?? 0;
}

/**
 * The sweeper: for each connection whose breaker has been open past its cool-down while steps are parked on it,
 * wake one parked step; it becomes the half-open probe.
 */
export async function breakersWakeProbes(tx: Tx, actor: string): Promise<number> {
  const open = await tx.$queryRaw<{ id: string; orgId: string }[]>`
    SELECT c.id, c.org_id AS "orgId" FROM connections c
    WHERE c.breaker_state IN ('open', 'half_open')
      AND c.breaker_opened_at <= now() - make_interval(secs => COALESCE((c.limits->'breaker'->>'coolDownMs')::float8, 30000) / 1000)
      AND EXISTS (SELECT 1 FROM steps s WHERE s.org_id = c.org_id AND s.status = 'parked'
                  AND s.error->>'connectionId' = c.id AND s.error->>'code' = 'breaker_open')
    LIMIT 100`;
  let woken = 0;
  for (const c of open) woken += await stepsResumeParked(tx, c.orgId, { code: "breaker_open", connectionId: c.id }, actor, 1);
  return woken;
}

/** Replaces a connection's cap and breaker settings (already validated by providers/connections/limits.ts). */
export async function connectionsSetLimits(tx: Tx, orgId: string, connectionId: string, limits: unknown): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE connections SET limits = ${JSON.stringify(limits)}::jsonb, updated_at = now() WHERE org_id = ${orgId} AND id = ${connectionId}`;
  return n > 0;
}

export interface ConnectionLimitsView {
  id: string;
  name: string;
  kind: string;
  limits: unknown;
  breakerState: string;
  inFlight: number;
  parkedSteps: number;
}

/** Each connection's limits with what they hold back now: calls in flight (slots held) and steps parked on it. */
export function connectionsLimitsView(tx: Tx, orgId: string): Promise<ConnectionLimitsView[]> {
  return tx.$queryRaw<ConnectionLimitsView[]>`
    SELECT c.id, c.name, c.kind, c.limits, c.breaker_state AS "breakerState",
           (SELECT count(*)::int FROM connection_slots s WHERE s.org_id = c.org_id AND s.connection_id = c.id
              AND s.holder IS NOT NULL AND s.lease_until > now()) AS "inFlight",
           (SELECT count(*)::int FROM steps p WHERE p.org_id = c.org_id AND p.status = 'parked' AND p.error->>'connectionId' = c.id) AS "parkedSteps"
    FROM connections c WHERE c.org_id = ${orgId} ORDER BY c.name`;
}
