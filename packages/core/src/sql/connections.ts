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

/** Every connection's name and kind (no secrets): what a graph may name, checked at publish. */
export function connectionsListKinds(tx: Tx, orgId: string): Promise<{ name: string; kind: ConnectionKind }[]> {
  return tx.$queryRaw<{ name: string; kind: ConnectionKind }[]>`SELECT name, kind FROM connections WHERE org_id = ${orgId}`;
}

/** Creates the row first (its id binds the ciphertext), then stores the encrypted secret. */
export async function connectionsInsert(
  tx: Tx,
  c: { orgId: string; kind: ConnectionKind; name: string; config: Record<string, unknown>; limits?: unknown },
): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO connections (org_id, kind, name, config, limits)
    VALUES (${c.orgId}, ${c.kind}, ${c.name}, ${JSON.stringify(c.config)}::jsonb, ${JSON.stringify(c.limits ?? {})}::jsonb)
    ON CONFLICT (org_id, name) DO NOTHING
    RETURNING id`;
  return rows[0]?.id ?? null;
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

/** A probe that logged in: only the check time, and only if nobody marked the connection broken meanwhile. */
export function connectionsMarkChecked(tx: Tx, orgId: string, id: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE connections SET checked_at = now() WHERE org_id = ${orgId} AND id = ${id} AND status = 'ok'`;
}

/**
 * Reconnect's first half: the new secret and status ok (connections/connect.ts resumes the parked steps with it).
 * `ifSecret`: only if the stored secret is still this one (a probe must not overwrite a secret a person just set).
 */
export function connectionsSetHealthySecret(tx: Tx, orgId: string, id: string, ciphertext: string, ifSecret?: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE connections SET secret = ${ciphertext}, status = 'ok', status_reason = NULL, checked_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND (${ifSecret ?? null}::text IS NULL OR secret = ${ifSecret ?? null}::text)`;
}
