import { destinationChanged, retypeSecret } from "./destination";
import { type Db, inTx } from "@holdfast/db";
import { HoldfastError, pgErrorCode } from "../../base/errors";
import type { ConnectionKindName } from "../../versions/forms/fields";
import { stepsResumeParked } from "../../store/sql/connection-limits";
import {
  type ConnectionListRow,
  connectionsById,
  connectionsDelete,
  connectionsHoldPublishes,
  connectionsList,
  connectionsNamedByDrafts,
  connectionsSetHealthySecret,
  connectionsUpdateIfNameFree,
  connectionsUsedByVersions,
} from "../../store/sql/connections";
import { ConnectionExistsError, connectionEgressRefusal, createConnection } from "./connect";
import { connectionConfigProblems, connectionKind, connectionNameProblem, connectionSecretProblem, problemSentence } from "../../versions/connection-kinds";
import { type ConnectionUse, deleteRefusal, draftsNote, liveUses, renameRefusal } from "./uses";
import { encryptSecret } from "./secrets";

/**
 * Settings -> Connections: add, change, rename and delete a connection, each refusal a sentence naming the field or
 * the versions in the way. Settings are checked against the kind's schema (versions/connection-kinds/); a rename or a delete
 * is refused while a published version that can still run names the connection (providers/connections/uses.ts).
 */

/** Settings that do not fit the kind: each problem names its field ("Port: must be ..."). */
export class ConnectionConfigError extends HoldfastError {
  constructor(readonly problems: string[]) {
    super("invalid_connection", problems.join("; "));
  }
}

export class ConnectionNotFoundError extends HoldfastError {
  constructor() {
    super("connection_not_found", "This connection does not exist (any more): reload the page.");
  }
}

/** A published version that can still run names the connection. */
export class ConnectionInUseError extends HoldfastError {
  constructor(
    message: string,
    readonly uses: ConnectionUse[],
  ) {
    super("connection_in_use", message);
  }
}

/** The settings parsed by the kind's schema (defaults filled), or ConnectionConfigError with every problem. */
export function validConnectionConfig(kind: string, config: unknown, hasSecret: boolean): Record<string, unknown> {
  const k = connectionKind(kind);
  if (!k) throw new ConnectionConfigError([`Kind: "${kind}" is not a kind of connection`]);
  const problems = connectionConfigProblems(k, config).map(problemSentence);
  const secret = problems.length ? null : connectionSecretProblem(k, config, hasSecret);
  if (secret) problems.push(secret);
  if (problems.length) throw new ConnectionConfigError(problems);
  const parsed = k.config.parse(config) as Record<string, unknown>;
  const refused = connectionEgressRefusal(parsed);
  if (refused) throw new ConnectionConfigError([`Holdfast does not connect to ${refused.host}: ${refused.reason}. Use the service's public address.`]);
  return parsed;
}

function validName(name: string): string {
  const problem = connectionNameProblem(name);
  if (problem) throw new ConnectionConfigError([problem]);
  return name;
}

export interface ListedConnection extends ConnectionListRow {
  /** Published versions that can still run and name it. */
  usedBy: ConnectionUse[];
}

export async function listConnections(db: Db, orgId: string): Promise<ListedConnection[]> {
  const [rows, uses] = await Promise.all([connectionsList(db, orgId), connectionsUsedByVersions(db, orgId)]);
  return rows.map((r) => ({ ...r, usedBy: liveUses(uses, r.name) }));
}

export async function addConnection(
  db: Db,
  c: { orgId: string; kind: ConnectionKindName; name: string; config: unknown; secret: string | null },
): Promise<string> {
  const secret = c.secret || null; // an empty field is no secret
  const config = validConnectionConfig(c.kind, c.config, secret !== null);
  return createConnection(db, { orgId: c.orgId, kind: c.kind, name: validName(c.name), config, secret });
}

export interface ConnectionChange {
  name?: string;
  config?: unknown;
  /** A new secret: the connection is healthy again and the steps parked on it resume (a reconnect). */
  secret?: string;
}

export interface ChangeResult {
  name: string;
  /** Steps parked on the connection that a new secret resumed. */
  resumed: number;
  /** A sentence about drafts that still name the old name, or null. */
  note: string | null;
}

/** Changes a connection's settings, name and/or secret in one transaction. */
export async function updateConnection(db: Db, orgId: string, id: string, input: ConnectionChange, actor: string): Promise<ChangeResult> {
  // An empty secret field keeps the saved secret.
  const change: ConnectionChange = input.secret === "" ? { ...input, secret: undefined } : input;
  try {
    return await inTx(db, async (tx) => {
      const renaming = change.name !== undefined;
      if (renaming) await connectionsHoldPublishes(tx, orgId);
      const row = await connectionsById(tx, orgId, id, true);
      if (!row) throw new ConnectionNotFoundError();
      const name = change.name === undefined ? row.name : validName(change.name);
      const hasSecret = change.secret !== undefined || row.secret !== null;
      const config = change.config === undefined ? row.config : validConnectionConfig(row.kind, change.config, hasSecret);
      if (change.config !== undefined && change.secret === undefined && row.secret !== null && destinationChanged(row.config, config)) {
        throw new ConnectionConfigError([retypeSecret]);
      }
      let note: string | null = null;
      if (name !== row.name) {
        const uses = liveUses(await connectionsUsedByVersions(tx, orgId, row.name), row.name);
        const refusal = renameRefusal(row.name, uses);
        if (refusal) throw new ConnectionInUseError(refusal, uses);
        note = draftsNote(row.name, await connectionsNamedByDrafts(tx, orgId, row.name), name);
      }
      if (name !== row.name || change.config !== undefined) {
        if (!(await connectionsUpdateIfNameFree(tx, orgId, id, { name, config }))) throw new ConnectionExistsError(name);
      }
      let resumed = 0;
      if (change.secret !== undefined) {
        await connectionsSetHealthySecret(tx, orgId, id, encryptSecret(change.secret, orgId, id));
        resumed = await stepsResumeParked(tx, orgId, { code: "needs_reconnect", connectionId: id }, actor);
      }
      return { name, resumed, note };
    });
  } catch (error) {
    // Two renames to one name at once: the unique index decides, and the loser reads the same sentence.
    if (pgErrorCode(error) === "23505" && change.name !== undefined) throw new ConnectionExistsError(change.name);
    throw error;
  }
}

/** Deletes a connection no runnable version names; returns its name and a sentence about drafts that still do. */
export async function deleteConnection(db: Db, orgId: string, id: string): Promise<{ name: string; note: string | null }> {
  return inTx(db, async (tx) => {
    await connectionsHoldPublishes(tx, orgId);
    const row = await connectionsById(tx, orgId, id, true);
    if (!row) throw new ConnectionNotFoundError();
    const uses = liveUses(await connectionsUsedByVersions(tx, orgId, row.name), row.name);
    const refusal = deleteRefusal(row.name, uses);
    if (refusal) throw new ConnectionInUseError(refusal, uses);
    const note = draftsNote(row.name, await connectionsNamedByDrafts(tx, orgId, row.name), null);
    await connectionsDelete(tx, orgId, id);
    return { name: row.name, note };
  });
}
