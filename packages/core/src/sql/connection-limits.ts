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

/** After the cool-down, the first attempt to ask becomes the half-open probe. */
export async function breakerTakeProbe(tx: Tx, connectionId: string, holder: string, coolDownMs: number): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE connections SET breaker_state = 'half_open', breaker_probe = ${holder}, updated_at = now()
    WHERE id = ${connectionId} AND breaker_state = 'open' AND breaker_opened_at <= now() - make_interval(secs => ${coolDownMs / 1000})`;
  return n === 1;
}

/**
 * Steps parked on a connection for `code` (needs_reconnect, breaker_open) back to ready with a wake-up and a
 * `step.resumed` row, in one statement. Returns how many.
 */
export async function stepsResumeParked(tx: Tx, orgId: string, connectionId: string, code: string, actor: string, limit = 100_000): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH picked AS (
      SELECT id FROM steps
      WHERE org_id = ${orgId} AND status = 'parked' AND error->>'connectionId' = ${connectionId} AND error->>'code' = ${code}
      ORDER BY updated_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
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
      SELECT org_id, run_id, id, node_id, attempt, 'step.resumed', lane, ${actor}, jsonb_build_object('connectionId', ${connectionId}::text, 'was', ${code}::text)
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
    WHERE c.breaker_state = 'open'
      AND c.breaker_opened_at <= now() - make_interval(secs => COALESCE((c.limits->'breaker'->>'coolDownMs')::float8, 30000) / 1000)
      AND EXISTS (SELECT 1 FROM steps s WHERE s.org_id = c.org_id AND s.status = 'parked'
                  AND s.error->>'connectionId' = c.id AND s.error->>'code' = 'breaker_open')
    LIMIT 100`;
  let woken = 0;
  for (const c of open) woken += await stepsResumeParked(tx, c.orgId, c.id, "breaker_open", actor, 1);
  return woken;
}
