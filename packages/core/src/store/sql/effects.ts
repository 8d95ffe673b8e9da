import type { Db, Tx } from "@holdfast/db";

export type EffectStatus = "in_flight" | "settled" | "outcome_unknown" | "needs_review";

export interface EffectRow {
  key: string;
  status: EffectStatus;
  owner: string | null;
  /** Milliseconds left on an in_flight lease by the database clock (0 when lapsed or none). */
  leaseLeftMs: number;
  attempts: number;
  /** null: not recorded (the step claim took the key); the node's connector decides. */
  providerIdempotent: boolean | null;
  result: unknown;
  error: unknown;
  firstAttemptAt: Date;
}

export interface EffectClaim {
  orgId: string;
  runId: string;
  stepId: string;
  key: string;
  kind: string;
  /** The attempt's owner token: step id + attempt, so only this attempt can settle what it began. */
  owner: string;
  leaseMs: number;
  providerIdempotent: boolean;
}

const columns = `key, status, owner, attempts, provider_idempotent AS "providerIdempotent", result, error,
  first_attempt_at AS "firstAttemptAt",
  GREATEST(0, EXTRACT(EPOCH FROM lease_until - now()) * 1000)::float8 AS "leaseLeftMs"`;

export type EffectClaimOrRead = { claimed: true } | { claimed: false; row: EffectRow };

/**
 * Claims the key for this attempt if nobody has, or reads what is there. The step claim does the same for effect
 * kinds (holdfast_step_claim); this is for a repeated read and for effects outside a step claim.
 */
export async function effectsClaimOrRead(tx: Tx, c: EffectClaim): Promise<EffectClaimOrRead> {
  const inserted = await tx.$queryRaw<{ key: string }[]>`
    INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until, provider_idempotent)
    VALUES (${c.orgId}, ${c.runId}, ${c.stepId}, ${c.key}, ${c.kind}, 'in_flight', ${c.owner},
            now() + make_interval(secs => ${c.leaseMs / 1000}), ${c.providerIdempotent})
    ON CONFLICT (org_id, key) DO NOTHING
    RETURNING key`;
  if (inserted.length) return { claimed: true };
  const rows = await tx.$queryRawUnsafe<EffectRow[]>(`SELECT ${columns} FROM effects WHERE org_id = $1 AND key = $2`, c.orgId, c.key);
  if (!rows[0]) throw new Error(`effect ${c.key} conflicted but cannot be read`);
  return { claimed: false, row: rows[0] };
}

/**
 * An in_flight claim whose lease lapsed. A first claim whose call never began (no `started_at`: only written for
 * providers that cannot take a repeat) is forgotten, so the next attempt is a plain first attempt; otherwise the
 * call may or may not have reached the provider: outcome_unknown.
 */
export async function effectsExpireLease(tx: Tx, orgId: string, key: string, providerIdempotent: boolean): Promise<number> {
  if (!providerIdempotent) {
    const forgotten = await tx.$executeRaw`
      DELETE FROM effects
      WHERE org_id = ${orgId} AND key = ${key} AND status = 'in_flight' AND lease_until < now()
        AND started_at IS NULL AND attempts = 1`;
    if (forgotten) return forgotten;
  }
  return tx.$executeRaw`
    UPDATE effects SET status = 'outcome_unknown', owner = NULL, lease_until = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND status = 'in_flight' AND lease_until < now()`;
}

/** Just before the provider call of an effect that cannot be repeated safely: from here on a lapse is uncertain. */
export function effectsMarkStarted(tx: Tx, orgId: string, key: string, owner: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET started_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND owner = ${owner} AND status = 'in_flight'`;
}

/** Another attempt of an uncertain effect, with the same key (only where the provider honours it). */
export function effectsBeginAttempt(tx: Tx, orgId: string, key: string, owner: string, leaseMs: number): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET status = 'in_flight', owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
                       attempts = attempts + 1, started_at = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND status = 'outcome_unknown'`;
}

/**
 * Records the provider's answer, fenced by the owner token. Normally holdfast_step_settle does this in the step's
 * own commit (store/sql/steps-settle.ts, `effect`); this is for an answer whose step settle was refused or aborted.
 */
export function effectsSettle(tx: Tx, orgId: string, key: string, owner: string, result: unknown, error: unknown = null): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET status = 'settled', result = ${JSON.stringify(result ?? null)}::jsonb,
                       error = ${error ? JSON.stringify(error) : null}::jsonb,
                       owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND owner = ${owner} AND status = 'in_flight'`;
}

/** The provider certainly did not act (no connection, or it refused: 429/503): give the key back, unused. */
export function effectsRelease(tx: Tx, orgId: string, key: string, owner: string): Promise<number> {
  return tx.$executeRaw`
    DELETE FROM effects WHERE org_id = ${orgId} AND key = ${key} AND owner = ${owner} AND status = 'in_flight' AND attempts = 1`;
}

/** A later attempt's refusal after an earlier uncertain one: back to uncertain, never forgotten. */

/** Reconciliation found the effect at the provider: settle it with what was found. */
export function effectsSettleReconciled(tx: Tx, orgId: string, key: string, result: unknown): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET status = 'settled', result = ${JSON.stringify(result ?? null)}::jsonb, error = NULL,
                       settled_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND status = 'outcome_unknown'`;
}

/** The call failed without a definite answer: uncertain, never retried blindly. */
export function effectsMarkUnknown(tx: Tx, orgId: string, key: string, owner: string, error: unknown, providerIdempotent: boolean): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET status = 'outcome_unknown', error = ${JSON.stringify(error ?? null)}::jsonb,
                       provider_idempotent = COALESCE(provider_idempotent, ${providerIdempotent}),
                       owner = NULL, lease_until = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND owner = ${owner} AND status = 'in_flight'`;
}

/** Neither an idempotent provider nor a way to reconcile: park it for a person with what is known. */
export function effectsNeedsReview(tx: Tx, orgId: string, key: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET status = 'needs_review', updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND status = 'outcome_unknown'`;
}

/** Extends the effect's lease with the step's heartbeat, only while this owner holds it. */
export function effectsHeartbeat(tx: Tx, orgId: string, key: string, owner: string, leaseMs: number): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    WHERE org_id = ${orgId} AND key = ${key} AND owner = ${owner} AND status = 'in_flight'`;
}

/** The ledger row of an effect key, locked (Retry from the failed step decides on it). */
export async function effectsLockByKey(tx: Tx, orgId: string, key: string): Promise<{ status: EffectStatus; error: unknown } | null> {
  const rows = await tx.$queryRaw<{ status: EffectStatus; error: unknown }[]>`
    SELECT status, error FROM effects WHERE org_id = ${orgId} AND key = ${key} FOR UPDATE`;
  return rows[0] ?? null;
}

/**
 * Retry of a step whose provider answered with a failure: the ledger forgets that answer so the next claim is a
 * first attempt with the same key (otherwise the failure would be replayed). Only a settled failure.
 */
export function effectsForgetFailure(tx: Tx, orgId: string, key: string): Promise<number> {
  return tx.$executeRaw`DELETE FROM effects WHERE org_id = ${orgId} AND key = ${key} AND status = 'settled' AND error IS NOT NULL`;
}

/**
 * An effect whose outcome nobody knows, as a condition on `effects` aliased `e`: uncertain, parked for a review, or
 * in flight with its lease lapsed (the worker died mid-call), unless it certainly never began (a first attempt at a
 * provider that cannot take a repeat, with no `started_at`). The needs-review list and the run page share it.
 */
export const effectUncertainSql = `(e.status IN ('outcome_unknown', 'needs_review')
  OR (e.status = 'in_flight' AND e.lease_until < now()
      AND NOT (e.started_at IS NULL AND e.attempts = 1 AND e.provider_idempotent IS FALSE)))`;

export interface UncertainEffect {
  key: string;
  kind: string;
  status: EffectStatus;
  stepId: string | null;
  nodeId: string | null;
  firstAttemptAt: Date;
}

/** The run's effects whose outcome nobody knows (see effectUncertainSql), oldest first. */
export function effectsUncertainOfRun(tx: Tx, orgId: string, runId: string): Promise<UncertainEffect[]> {
  return tx.$queryRawUnsafe<UncertainEffect[]>(
    `SELECT e.key, e.kind, e.status, e.step_id AS "stepId", s.node_id AS "nodeId", e.first_attempt_at AS "firstAttemptAt"
     FROM effects e LEFT JOIN steps s ON s.org_id = e.org_id AND s.id = e.step_id
     WHERE e.org_id = $1 AND e.run_id = $2 AND ${effectUncertainSql}
     ORDER BY e.created_at`,
    orgId,
    runId,
  );
}

/**
 * A person checked an uncertain effect of a stopped run at the provider: settled with what they found (it happened:
 * their note as the result; it did not: a `not_performed` error with their note), only if it is still uncertain.
 */
export async function effectsSettleReviewed(
  tx: Tx,
  orgId: string,
  runId: string,
  key: string,
  found: { happened: boolean; note: string; by: string },
): Promise<{ stepId: string | null; nodeId: string | null } | null> {
  const record = { resolved: found.happened ? "done" : "not_performed", note: found.note, by: found.by };
  const error = found.happened ? null : JSON.stringify({ code: "not_performed", message: `checked by ${found.by}: it did not happen`, ...record });
  const rows = await tx.$queryRawUnsafe<{ stepId: string | null; nodeId: string | null }[]>(
    `UPDATE effects e SET status = 'settled', result = CASE WHEN $4 THEN $5::jsonb ELSE NULL END, error = $6::jsonb,
                          owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now()
     WHERE e.org_id = $1 AND e.run_id = $2 AND e.key = $3 AND ${effectUncertainSql}
     RETURNING e.step_id AS "stepId", (SELECT node_id FROM steps s WHERE s.org_id = e.org_id AND s.id = e.step_id) AS "nodeId"`,
    orgId,
    runId,
    key,
    found.happened,
    JSON.stringify(record),
    error,
  );
  return rows[0] ?? null;
}

/** A person found the effect happened: the review's effect is settled with their record as its result. */
export function effectsSettleNeedsReview(tx: Tx, orgId: string, key: string, output: unknown): Promise<number> {
  return tx.$executeRaw`
    UPDATE effects SET status = 'settled', result = ${JSON.stringify(output)}::jsonb, owner = NULL, lease_until = NULL,
                       settled_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND key = ${key} AND status = 'needs_review'`;
}

/** A person found the effect did not happen: the ledger forgets the uncertain attempt (the next claim is a first one). */
export function effectsDeleteNeedsReview(tx: Tx, orgId: string, key: string): Promise<number> {
  return tx.$executeRaw`DELETE FROM effects WHERE org_id = ${orgId} AND key = ${key} AND status = 'needs_review'`;
}

export interface EffectFigures {
  inFlight: number;
  inFlightPastLease: number;
  needsReview: number;
  outcomeUnknown: number;
}

/** Effects not settled, by state (in flight, in flight past their lease, needing review, outcome unknown). */
export async function effectsFigures(db: Db | Tx): Promise<EffectFigures> {
  const rows = await db.$queryRaw<EffectFigures[]>`
    SELECT count(*) FILTER (WHERE status = 'in_flight')::int AS "inFlight",
           count(*) FILTER (WHERE status = 'in_flight' AND lease_until < now())::int AS "inFlightPastLease",
           count(*) FILTER (WHERE status = 'needs_review')::int AS "needsReview",
           count(*) FILTER (WHERE status = 'outcome_unknown')::int AS "outcomeUnknown"
    FROM effects WHERE status <> 'settled'`;
  return rows[0] as EffectFigures;
}

/** An effect as the run page shows it. */
export interface EffectView {
  key: string;
  kind: string;
  status: string;
  attempts: number;
  providerIdempotent: boolean | null;
  result: unknown;
  error: unknown;
  stepId: string;
  firstAttemptAt: Date;
  settledAt: Date | null;
}

export function effectsViewOfRun(db: Db | Tx, orgId: string, runId: string): Promise<EffectView[]> {
  return db.$queryRaw<EffectView[]>`
    SELECT key, kind, status, attempts, provider_idempotent AS "providerIdempotent", result, error, step_id AS "stepId",
           first_attempt_at AS "firstAttemptAt", settled_at AS "settledAt"
    FROM effects WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY created_at`;
}
