import { type Db, inTx } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import { stepsResumeParked } from "../../store/sql/connection-limits";
import { type EgressRefusedError, literalHostRefusal, literalUrlRefusal } from "../net/egress";
import { type ConnectionKind, connectionsInsert, connectionsSetHealthySecret, connectionsSetSecret } from "../../store/sql/connections";
import { connectionLimits } from "./limits";
import { encryptSecret } from "./secrets";

type ConnectionLimitsInput = Parameters<typeof connectionLimits.parse>[0];

export class ConnectionExistsError extends HoldfastError {
  constructor(name: string) {
    super("connection_exists", `a connection named "${name}" already exists in this organisation; pick another name or edit that one`);
  }
}

/** A new connection: the row, then its secret encrypted under its own id, in one transaction. */
export async function createConnection(
  db: Db,
  c: { orgId: string; kind: ConnectionKind; name: string; config: Record<string, unknown>; secret: string | null; limits?: ConnectionLimitsInput },
): Promise<string> {
  const refused = connectionEgressRefusal(c.config);
  if (refused) throw refused;
  return inTx(db, async (tx) => {
    const id = await connectionsInsert(tx, { ...c, limits: connectionLimits.parse(c.limits ?? {}) });
    if (!id) throw new ConnectionExistsError(c.name);
    if (c.secret !== null) await connectionsSetSecret(tx, c.orgId, id, encryptSecret(c.secret, c.orgId, id));
    return id;
  });
}

/**
 * Reconnect with a new secret: the connection is healthy again and every step parked on it resumes from where it
 * stopped (same step, same effect key), in one statement. Returns how many steps resumed.
 */
export function reconnectConnection(db: Db, orgId: string, connectionId: string, secret: string, actor: string): Promise<number> {
  return resumeConnection(db, orgId, connectionId, encryptSecret(secret, orgId, connectionId), actor);
}

/** The connection healthy with this (encrypted) secret and its parked steps resumed, in one transaction. */
export function resumeConnection(db: Db, orgId: string, connectionId: string, ciphertext: string, actor: string, ifSecret?: string): Promise<number> {
  return inTx(db, async (tx) => {
    if (!(await connectionsSetHealthySecret(tx, orgId, connectionId, ciphertext, ifSecret))) return 0;
    return stepsResumeParked(tx, orgId, { code: "needs_reconnect", connectionId }, actor);
  });
}

/**
 * A connection whose literal host the egress guard refuses (an SMTP host, a CRM or model base URL, a Slack API URL
 * naming a loopback, private, link-local ... address) is refused when it is made, not on its first use.
 */
export function connectionEgressRefusal(config: Record<string, unknown>): EgressRefusedError | null {
  if (typeof config.host === "string") return literalHostRefusal(config.host, typeof config.port === "number" ? config.port : 587);
  for (const url of [config.baseUrl, config.apiUrl]) {
    const refused = typeof url === "string" ? literalUrlRefusal(url) : null;
    if (refused) return refused;
  }
  return null;
}
