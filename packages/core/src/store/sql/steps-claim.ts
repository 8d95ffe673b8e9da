import { Prisma, type Sql, type Tx } from "@holdfast/db";
import type { OutboxRow } from "./outbox";
import type { ClaimedStep } from "./steps";

/** Taking a step and holding it: the fenced claim, the take of ready steps, the heartbeat, the release at shutdown. */

/**
 * Takes the step if nobody holds a live lease, it is due, and its run is still running and not being cancelled.
 * The attempt number it returns is the worker's fencing token. The claim is on the timeline (extra attempts show).
 */
export async function stepsClaimIfLeaseFree(
  sql: Sql,
  stepId: string,
  worker: string,
  leaseMs: number,
  /** The kinds whose claim also claims the effect key (versions/kinds/registry.ts effectKinds). */
  effectKinds: readonly string[],
  /** A held wake-up this worker is fulfilling itself (local dispatch): marked sent with the claim. */
  outboxId?: string,
): Promise<ClaimedStep | undefined> {
  // holdfast_step_claim (store/sql/functions/step_claim.sql): the fenced UPDATE, its timeline row, the
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
 * steps for `worker`, in one statement and one commit (holdfast_steps_take_ready, store/sql/functions/steps_take_ready.sql).
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

/** A claim as the stored functions answer it (runSeq as text). */
export type RawClaim = Omit<ClaimedStep, "runSeq"> & { runSeq: string };
export const fromRawClaim = (raw: RawClaim): ClaimedStep => ({ ...raw, runSeq: BigInt(raw.runSeq) });

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

/**
 * Shutdown: give the step back at once (lease_until = now) so another worker takes it without waiting, with its
 * wake-up (`wake`: the step's step.ready row, run/apply/rows.ts stepReady).
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
