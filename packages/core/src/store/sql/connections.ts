import type { Db, Tx } from "@holdfast/db";
import type { ConnectionKindName } from "../../base/types/connections";

/** connections.kind (CHECK connections_kind_check); the kinds' modules are versions/connection-kinds/. */
export type ConnectionKind = ConnectionKindName;

export interface ConnectionRow {
  id: string;
  orgId: string;
  kind: ConnectionKind;
  name: string;
  config: Record<string, unknown>;
  /** Ciphertext (providers/connections/secrets.ts); never sent to a browser. */
  secret: string | null;
  status: "ok" | "needs_reconnect";
  statusReason: string | null;
  /** providers/connections/limits.ts: the cap and the breaker's settings. */
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
export function connectionsListKinds(tx: Tx, orgId: string): Promise<{ name: string; kind: ConnectionKind; config: unknown }[]> {
  return tx.$queryRaw<{ name: string; kind: ConnectionKind; config: unknown }[]>`SELECT name, kind, config FROM connections WHERE org_id = ${orgId}`;
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
 * Reconnect's first half: the new secret and status ok (providers/connections/connect.ts resumes the parked steps with it).
 * `ifSecret`: only if the stored secret is still this one (a probe must not overwrite a secret a person just set).
 */
export function connectionsSetHealthySecret(tx: Tx, orgId: string, id: string, ciphertext: string, ifSecret?: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE connections SET secret = ${ciphertext}, status = 'ok', status_reason = NULL, checked_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND (${ifSecret ?? null}::text IS NULL OR secret = ${ifSecret ?? null}::text)`;
}

/** A connection as Settings lists it: never its secret, only whether one is set. */
export interface ConnectionListRow {
  id: string;
  kind: ConnectionKind;
  name: string;
  config: Record<string, unknown>;
  status: "ok" | "needs_reconnect";
  statusReason: string | null;
  hasSecret: boolean;
  checkedAt: Date | null;
}

export function connectionsList(tx: Tx, orgId: string): Promise<ConnectionListRow[]> {
  return tx.$queryRaw<ConnectionListRow[]>`
    SELECT id, kind, name, config, status, status_reason AS "statusReason", secret IS NOT NULL AS "hasSecret", checked_at AS "checkedAt"
    FROM connections WHERE org_id = ${orgId} ORDER BY name`;
}

/** One connection of the organisation by id; `lock`: FOR UPDATE (a change decided on what it read). */
export async function connectionsById(tx: Tx, orgId: string, id: string, lock = false): Promise<ConnectionRow | null> {
  const rows = await tx.$queryRawUnsafe<ConnectionRow[]>(
    `SELECT ${columns} FROM connections WHERE org_id = $1 AND id = $2${lock ? " FOR UPDATE" : ""}`,
    orgId,
    id,
  );
  return rows[0] ?? null;
}

/** A new name and/or settings; false when the name is taken by another connection of the organisation. */
export async function connectionsUpdateIfNameFree(tx: Tx, orgId: string, id: string, c: { name: string; config: Record<string, unknown> }): Promise<boolean> {
  const n = await tx.$executeRaw`
    UPDATE connections SET name = ${c.name}, config = ${JSON.stringify(c.config)}::jsonb, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}
      AND NOT EXISTS (SELECT 1 FROM connections o WHERE o.org_id = ${orgId} AND o.name = ${c.name} AND o.id <> ${id})`;
  return n > 0;
}

export async function connectionsDelete(tx: Tx, orgId: string, id: string): Promise<boolean> {
  return (await tx.$executeRaw`DELETE FROM connections WHERE org_id = ${orgId} AND id = ${id}`) > 0;
}

/**
 * Holds off Publish while a connection is renamed or deleted: publish takes its draft's row FOR UPDATE before it
 * checks the graph's connections, so with every draft of the organisation held FOR SHARE, a publish either committed
 * before (and its version is seen here) or checks after this change committed (and refuses the missing name).
 */
export async function connectionsHoldPublishes(tx: Tx, orgId: string): Promise<void> {
  await tx.$queryRaw`SELECT automation_id FROM automation_drafts WHERE org_id = ${orgId} ORDER BY automation_id FOR SHARE`;
}

/** A published version naming a connection (a node's `connection`, an approval's `slack.connection`). */
export interface ConnectionUseRow {
  name: string;
  automationId: string;
  automationName: string;
  version: number;
  /** The automation's newest published version: new runs start on it. */
  latest: boolean;
  /** Runs still running on this version. */
  running: number;
}

/** Every published version that names a connection (`name`: only that one), newest first per automation. */
export function connectionsUsedByVersions(tx: Tx, orgId: string, name: string | null = null): Promise<ConnectionUseRow[]> {
  return tx.$queryRaw<ConnectionUseRow[]>`
    SELECT n.name, v.automation_id AS "automationId", a.name AS "automationName", v.version,
           v.version = (SELECT max(x.version) FROM automation_versions x
                        WHERE x.org_id = v.org_id AND x.automation_id = v.automation_id AND x.published_at IS NOT NULL) AS latest,
           (SELECT count(*)::int FROM runs r WHERE r.org_id = v.org_id AND r.version_id = v.id AND r.status = 'running') AS running
    FROM automation_versions v
    JOIN automations a ON a.org_id = v.org_id AND a.id = v.automation_id
    CROSS JOIN LATERAL (
      SELECT DISTINCT ref.name
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(v.graph->'nodes') = 'array' THEN v.graph->'nodes' ELSE '[]'::jsonb END) node,
           LATERAL (VALUES (node->'config'->>'connection'), (node->'config'->'slack'->>'connection')) ref(name)
      WHERE ref.name IS NOT NULL
    ) n
    WHERE v.org_id = ${orgId} AND v.published_at IS NOT NULL AND (${name}::text IS NULL OR n.name = ${name}::text)
    ORDER BY a.name, v.version DESC`;
}

/** The automations whose draft names this connection (drafts are not published: nothing runs on them). */
export async function connectionsNamedByDrafts(tx: Tx, orgId: string, name: string): Promise<string[]> {
  const rows = await tx.$queryRaw<{ automationName: string }[]>`
    SELECT a.name AS "automationName"
    FROM automation_drafts d JOIN automations a ON a.org_id = d.org_id AND a.id = d.automation_id
    WHERE d.org_id = ${orgId}
      AND EXISTS (
        SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(d.graph->'nodes') = 'array' THEN d.graph->'nodes' ELSE '[]'::jsonb END) node
        WHERE node->'config'->>'connection' = ${name} OR node->'config'->'slack'->>'connection' = ${name})
    ORDER BY a.name`;
  return rows.map((r) => r.automationName);
}

/** Slack connections of the workspace (team id), in every organisation that connected it. */
export function connectionsSlackOfTeam(db: Db | Tx, teamId: string): Promise<{ orgId: string; config: unknown }[]> {
  return db.$queryRaw<{ orgId: string; config: unknown }[]>`
    SELECT org_id AS "orgId", config FROM connections WHERE kind = 'slack' AND config->>'teamId' = ${teamId}`;
}

/** The sweeper's probe schedule: SMTP connections not checked for `staleSeconds`, oldest first, across organisations. */
export function connectionsSmtpStale(db: Db | Tx, staleSeconds: number, limit: number): Promise<ConnectionRow[]> {
  return db.$queryRaw<ConnectionRow[]>`
    SELECT id, org_id AS "orgId", kind, name, config, secret, status, status_reason AS "statusReason", limits,
           breaker_state AS "breakerState", breaker_probe AS "breakerProbe",
           (EXTRACT(EPOCH FROM now() - breaker_opened_at) * 1000)::float8 AS "breakerOpenForMs"
    FROM connections
    WHERE kind = 'smtp' AND (checked_at IS NULL OR checked_at < now() - make_interval(secs => ${staleSeconds}))
    ORDER BY checked_at NULLS FIRST
    LIMIT ${limit}`;
}
