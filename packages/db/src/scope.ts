import pg from "pg";
import { requireDirect } from "./direct";
import { type PoolMode, poolModeConfig, type TransactionModeClient } from "./pool-mode";

/**
 * Row-level security scope of a connection (the web process's role sees only the rows this allows):
 * - `sessionHash`: the signed-in browser's session id (sha256 of its cookie token); the database itself turns it into
 *   the user's organisations, and only while the session is valid by its own clock (holdfast_scope_orgs());
 * - `orgIds`: organisations a request is authenticated for by other means (a trigger's credential, a signed Slack
 *   request, the inbound-email token);
 * - `allOrgs`: deployment-wide reads by the operator (the health figures behind the metrics token).
 * The empty scope sees no tenant row at all.
 */
export interface DbScope {
  sessionHash?: string | null;
  orgIds?: readonly string[];
  allOrgs?: boolean;
}

export const emptyScope: DbScope = {};

const setScope = `SELECT set_config('holdfast.session', $1, false), set_config('holdfast.org_ids', $2, false),
  set_config('holdfast.all_orgs', $3, false)`;

const scopeValues = (scope: DbScope) => [scope.sessionHash ?? "", (scope.orgIds ?? []).join(","), scope.allOrgs ? "on" : "off"];

/** The scope as one statement that lasts until its transaction ends (transaction mode: literals, it rides with BEGIN). */
export function transactionScopeSql(scope: DbScope): string {
  const [session, orgs, all] = scopeValues(scope).map((v) => pg.escapeLiteral(v));
  return `SELECT set_config('holdfast.session', ${session}, true), set_config('holdfast.org_ids', ${orgs}, true), set_config('holdfast.all_orgs', ${all}, true)`;
}

/**
 * A pool that stamps every connection it hands out with the scope of the code asking for it (read when the
 * connection is requested, so each query and each transaction runs under its own request's scope).
 *
 * Session mode: the scope is the connection's session setting, set when a connection is handed to another scope.
 * Transaction mode (PgBouncer): a session setting would stay on a server connection that another web process uses
 * next, so the scope is transaction-local: set_config(..., true) in the same message as each transaction's BEGIN
 * (pool-mode.ts), and a single statement outside a transaction runs in one of its own with the scope.
 */
export class ScopedPool extends pg.Pool {
  private readonly transactionMode: boolean;

  constructor(
    config: pg.PoolConfig,
    private readonly scopeOf: () => Promise<DbScope>,
    mode: PoolMode = "session",
  ) {
    super({ ...config, ...poolModeConfig(mode) });
    this.transactionMode = mode === "transaction";
  }

  // Prisma's adapter uses the promise forms only: connect() for transactions, query() for single statements.
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): Promise<pg.PoolClient> | undefined {
    const scoped = this.scopedConnect();
    if (!callback) return scoped;
    scoped.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (error: Error) => callback(error, undefined, () => {}),
    );
    return undefined;
  }

  private async scopedConnect(): Promise<pg.PoolClient> {
    const scope = await this.scopeOf();
    const client = (await super.connect()) as pg.PoolClient & { holdfastScope?: string; holdfastDirect?: boolean };
    if (this.transactionMode) {
      (client as unknown as TransactionModeClient).holdfastScopeSql = transactionScopeSql(scope);
      return client;
    }
    const values = scopeValues(scope);
    const key = values.join("|");
    // The settings are the connection's (set outside any transaction, so no rollback undoes them): a connection that
    // already carries this scope needs no round trip, which keeps a burst of one organisation's webhooks cheap.
    if (client.holdfastScope === key) return client;
    const stopListening = listenWhileOut(client);
    try {
      // A session-level scope is safe only on a session of its own: refuse a pooler's connection (once per connection).
      if (!client.holdfastDirect) {
        await requireDirect(client, "scope");
        client.holdfastDirect = true;
      }
      await client.query(setScope, values);
      client.holdfastScope = key;
    } catch (error) {
      stopListening();
      client.release(error as Error);
      throw error;
    }
    stopListening();
    return client;
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query overloads; the adapter calls query(config) and awaits it
  override query(config: any, values?: any, callback?: any): any {
    if (typeof values === "function" || typeof callback === "function") throw new Error("ScopedPool.query takes no callback");
    if (this.transactionMode) return this.queryInTransaction(config, values);
    return (async () => {
      const client = await this.scopedConnect();
      const stopListening = listenWhileOut(client);
      try {
        const result = await client.query(config, values);
        stopListening();
        client.release();
        return result;
      } catch (error) {
        // As pg-pool does: a client whose query failed is not trusted back into the pool.
        stopListening();
        client.release(error as Error);
        throw error;
      }
    })();
  }

  /** Transaction mode: one statement in a transaction of its own, so that the scope (set after BEGIN) covers it. */
  private async queryInTransaction(config: unknown, values: unknown): Promise<pg.QueryResult> {
    const client = await this.scopedConnect();
    const stopListening = listenWhileOut(client);
    try {
      await client.query("BEGIN");
      const result = await client.query(config as pg.QueryConfig, values as unknown[]);
      await client.query("COMMIT");
      stopListening();
      client.release();
      return result;
    } catch (error) {
      // The statement failed (the connection is still good): end the transaction and keep the connection.
      const kept = await client.query("ROLLBACK").then(
        () => true,
        () => false,
      );
      stopListening();
      client.release(kept ? undefined : (error as Error));
      throw error;
    }
  }
}

/**
 * A checked-out client has no 'error' listener of the pool's (pg-pool removes its idle one on acquire), and a
 * connection that breaks under a query (the database restarted, a proxy cut it) emits 'error' on the client as well
 * as failing the query: with no listener that is an uncaught exception that ends the process. pg-pool's own query()
 * listens the same way; the query's rejection is what reports the failure.
 */
function listenWhileOut(client: pg.PoolClient): () => void {
  const ignore = () => {};
  client.on("error", ignore);
  return () => client.removeListener("error", ignore);
}
