import { errorChain, pgErrorCode } from "../../base/errors";

/**
 * PostgreSQL refusing a connection because no slot is free (SQLSTATE 53300: max_connections reached, or a database's
 * or role's CONNECTION LIMIT). Seen when several deployments share one PostgreSQL and each process keeps a pool of
 * its own: the outage watch treats it as the database out of reach (outage.ts); this says why, and what to do.
 */
const slotMessages = /too many clients already|too many connections for|remaining connection slots are reserved/i;

export function isOutOfConnectionSlots(error: unknown): boolean {
  if (pgErrorCode(error) === "53300") return true;
  for (const o of errorChain(error)) {
    if (o.code === "53300" || (typeof o.message === "string" && slotMessages.test(o.message))) return true;
  }
  return false;
}

/** What to do about it, said wherever a refused slot is logged. */
export const connectionSlotAdvice =
  "run the web and the lane workers through PgBouncer with DATABASE_POOL_MODE=transaction (docs/operations.md, \"Through PgBouncer\"), or lower DB_POOL_SIZE, or raise max_connections";

/** The start-up line when the first connection is refused for want of a slot (the process keeps trying). */
export const noSlotAtStartSentence = `PostgreSQL refused this process a connection: too many clients (max_connections, or a CONNECTION LIMIT, is reached). Waiting for a free slot; to make room, ${connectionSlotAdvice}`;

export interface ConnectionSlotFigures {
  maxConnections: number;
  /** Connections open on the server now (every database and role, including this one). */
  inUse: number;
  reservedForSuperusers: number;
}

/** One line's worth of figures, once a connection was had after waiting for a slot. */
export function describeSlotFigures(f: ConnectionSlotFigures): string {
  return `max_connections is ${f.maxConnections} (${f.reservedForSuperusers} kept for superusers), ${f.inUse} in use now`;
}
