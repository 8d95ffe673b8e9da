import type { Tx } from "@holdfast/db";

export type ConnectionKind = "smtp" | "crm" | "model" | "slack";

export interface ConnectionRow {
  id: string;
  orgId: string;
  kind: ConnectionKind;
  name: string;
  config: Record<string, unknown>;
  /** Ciphertext (connections/secrets.ts); never sent to a browser. */
  secret: string | null;
  status: "ok" | "needs_reconnect";
  statusReason: string | null;
  /** connections/limits.ts: the cap and the breaker's settings. */
  limits: unknown;
  breakerState: "closed" | "open" | "half_open";
  breakerProbe: string | null;
  /** How long the breaker has been open, by the database clock (null when it is not). */
  breakerOpenForMs: number | null;
}

const columns = `id, org_id AS "orgId", kind, name, config, secret, status, status_reason AS "statusReason", limits,
  breaker_state AS "breakerState", breaker_probe AS "breakerProbe",
  (EXTRACT(EPOCH FROM now() - breaker_opened_at) * 1000)::float8 AS "breakerOpenForMs"`;

export async function connectionsByName(tx: Tx, orgId: string, name: string): Promise<ConnectionRow | null> {
  const rows = await tx.$queryRawUnsafe<ConnectionRow[]>(`SELECT ${columns} FROM connections WHERE org_id = $1 AND name = $2`, orgId, name);
  return rows[0] ?? null;
}

/** Creates the row first (its id binds the ciphertext), then stores the encrypted secret. */
export async function connectionsInsert(
  tx: Tx,
  c: { orgId: string; kind: ConnectionKind; name: string; config: Record<string, unknown>; limits?: unknown },
): Promise<string> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO connections (org_id, kind, name, config, limits)
    VALUES (${c.orgId}, ${c.kind}, ${c.name}, ${JSON.stringify(c.config)}::jsonb, ${JSON.stringify(c.limits ?? {})}::jsonb)
    RETURNING id`;
  return (rows[0] as { id: string }).id;
}

export function connectionsSetSecret(tx: Tx, orgId: string, id: string, ciphertext: string): Promise<number> {
  return tx.$executeRaw`UPDATE connections SET secret = ${ciphertext}, updated_at = now() WHERE org_id = ${orgId} AND id = ${id}`;
}

/** An authorisation failure (or a failed health probe): the account needs a person to reconnect it. */
export function connectionsMarkNeedsReconnect(tx: Tx, orgId: string, id: string, reason: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE connections SET status = 'needs_reconnect', status_reason = ${reason}, checked_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}`;
}

export function connectionsMarkHealthy(tx: Tx, orgId: string, id: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE connections SET status = 'ok', status_reason = NULL, checked_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}`;
}

/**
 * Reconnect: the new secret, status ok, and every step parked on this connection back to ready with a fresh
 * wake-up and a timeline row, in one statement. The steps resume from where they stopped (same step, same effect
 * key). Returns how many steps were resumed.
 */
export async function connectionsReconnect(tx: Tx, orgId: string, id: string, ciphertext: string, actor: string): Promise<number> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH c AS (
      UPDATE connections SET secret = ${ciphertext}, status = 'ok', status_reason = NULL, checked_at = now(), updated_at = now()
      WHERE org_id = ${orgId} AND id = ${id}
      RETURNING id
    ), moved AS (
      UPDATE steps s SET status = 'ready', available_at = now(), error = NULL, updated_at = now(), woken_at = now()
      FROM c
      WHERE s.org_id = ${orgId} AND s.status = 'parked' AND s.error->>'connectionId' = c.id
      RETURNING s.id, s.org_id, s.run_id, s.node_id, s.attempt, s.lane
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'step.ready', jsonb_build_object('orgId', org_id, 'runId', run_id, 'stepId', id, 'lane', lane)
      FROM moved
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
      SELECT org_id, run_id, id, node_id, attempt, 'step.resumed', lane, ${actor}, jsonb_build_object('connectionId', ${id}::text)
      FROM moved
    )
    SELECT count(*)::int AS n FROM moved`;
  return rows[0]?.n ?? 0;
}
