import type pg from "pg";

/**
 * Whether a connection reaches PostgreSQL's own session or goes through a transaction pooler. PostgreSQL tells each
 * client its backend's process id when the connection opens (BackendKeyData); PgBouncer answers with a key of its
 * own, since the server connection behind the client changes. HAProxy passes the server's through. So a connection
 * whose announced id differs from `pg_backend_pid()` is pooled, and anything that keeps session state on it (the
 * web's scope in session mode, LISTEN, the migrations' advisory lock) would be shared with other clients.
 */
export async function isPooled(client: pg.ClientBase): Promise<boolean> {
  const announced = (client as pg.ClientBase & { processID?: number | null }).processID;
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  return announced !== rows[0]?.pid;
}

/** Thrown when a connection that must keep its session goes through a pooler: the sentence says which setting to fix. */
export class PooledConnectionError extends Error {
  constructor(readonly purpose: "scope" | "listen" | "migrate") {
    super(pooledSentence[purpose]);
    this.name = "PooledConnectionError";
  }
}

const pooledSentence: Record<PooledConnectionError["purpose"], string> = {
  scope:
    "The web's database connection goes through a connection pooler (PgBouncer), where its row-level security scope would pass to other requests: set DATABASE_POOL_MODE=transaction for the web, or point WEB_DATABASE_URL at PostgreSQL (or HAProxy) directly.",
  listen:
    "The LISTEN connection goes through a connection pooler (PgBouncer), where subscriptions are lost: set DATABASE_DIRECT_URL to PostgreSQL (or HAProxy) directly.",
  migrate:
    "The migrations' connection goes through a connection pooler (PgBouncer), where their lock cannot hold: set MIGRATE_DATABASE_URL (or DATABASE_DIRECT_URL) to PostgreSQL (or HAProxy) directly.",
};

/** Refuses a pooled connection for `purpose` (one round trip, once per connection). */
export async function requireDirect(client: pg.ClientBase, purpose: PooledConnectionError["purpose"]): Promise<void> {
  if (await isPooled(client)) throw new PooledConnectionError(purpose);
}
