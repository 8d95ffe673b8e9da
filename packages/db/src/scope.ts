import pg from "pg";

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

/**
 * A pool that stamps every connection it hands out with the scope of the code asking for it (read when the
 * connection is requested, so each query and each transaction runs under its own request's scope).
 */
export class ScopedPool extends pg.Pool {
  constructor(
    config: pg.PoolConfig,
    private readonly scopeOf: () => Promise<DbScope>,
  ) {
    super(config);
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
    const client = (await super.connect()) as pg.PoolClient & { holdfastScope?: string };
    const values = [scope.sessionHash ?? "", (scope.orgIds ?? []).join(","), scope.allOrgs ? "on" : "off"];
    const key = values.join("|");
    // The settings are the connection's (set outside any transaction, so no rollback undoes them): a connection that
    // already carries this scope needs no round trip, which keeps a burst of one organisation's webhooks cheap.
    if (client.holdfastScope === key) return client;
    try {
      await client.query(setScope, values);
      client.holdfastScope = key;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    return client;
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query overloads; the adapter calls query(config) and awaits it
  override query(config: any, values?: any, callback?: any): any {
    if (typeof values === "function" || typeof callback === "function") throw new Error("ScopedPool.query takes no callback");
    return (async () => {
      const client = await this.scopedConnect();
      try {
        const result = await client.query(config, values);
        client.release();
        return result;
      } catch (error) {
        // As pg-pool does: a client whose query failed is not trusted back into the pool.
        client.release(error as Error);
        throw error;
      }
    })();
  }
}
