import pg from "pg";

/**
 * How a process's connections are pooled on the way to PostgreSQL (DATABASE_POOL_MODE):
 * - session: each connection is a server session of its own (PostgreSQL itself, or HAProxy in front of it);
 * - transaction: PgBouncer's transaction mode, where the server connection behind a client connection changes hands
 *   at every transaction's end. Nothing may then outlive a transaction on the server: no named prepared statement
 *   (PgBouncer 1.18 does not track them; another client would find the name taken, or missing) and no session
 *   setting (the next client of that server connection would inherit it).
 */
export type PoolMode = "session" | "transaction";

/** What TransactionModeClient needs to stamp a transaction with the row-level security scope (scope.ts). */
interface ScopeCarrier {
  /** The set_config(..., true) statement of the request that checked the connection out; null: no scope. */
  holdfastScopeSql?: string | null;
  /** Set after a BEGIN that carried the scope, until the next statement: SET TRANSACTION must still come first. */
  holdfastScopeJustBegun?: boolean;
}

type QueryConfigLike = { text?: string; name?: string; submit?: unknown } & Record<string, unknown>;

/**
 * The pg client of a pool in transaction mode (pg.Pool's `Client` option): every statement goes unnamed (the
 * protocol's unnamed statement lives until the next one, within one server round), so the hot path's and the starts'
 * named statements (queryNamed, steps-claim.ts) need no change of their own. A scoped pool (scope.ts) also hands it
 * its request's set_config(..., true) statement, which rides in the same message as Prisma's BEGIN: no extra round trip.
 */
export class TransactionModeClient extends pg.Client implements ScopeCarrier {
  holdfastScopeSql: string | null = null;
  holdfastScopeJustBegun = false;

  // biome-ignore lint/suspicious/noExplicitAny: pg's query overloads (text, config object or Submittable; promise or callback)
  override query(config: any, values?: any, callback?: any): any {
    const query = super.query as unknown as (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;
    return query.call(this, this.rewrite(config), values, callback);
  }

  private rewrite(config: unknown): unknown {
    if (config === null || config === undefined) return config;
    if (typeof config === "object" && typeof (config as QueryConfigLike).submit === "function") return config; // a cursor or a stream: as is
    const object = typeof config === "string" ? null : (config as QueryConfigLike);
    const text = typeof config === "string" ? config : object?.text;
    const begun = this.holdfastScopeJustBegun;
    this.holdfastScopeJustBegun = false;
    let newText = text;
    if (this.holdfastScopeSql && typeof text === "string") {
      const statement = text.trim().toUpperCase();
      if (statement === "BEGIN") {
        newText = `BEGIN; ${this.holdfastScopeSql}`;
        this.holdfastScopeJustBegun = true;
      } else if (begun && statement.startsWith("SET TRANSACTION ")) {
        // The scope's SELECT already ran in this (empty) transaction, and an isolation level must come before any
        // query: start it again with the level first.
        newText = `ROLLBACK; BEGIN; ${text}; ${this.holdfastScopeSql}`;
      }
    }
    if (object === null) return newText;
    if (object.name === undefined && newText === text) return config;
    const { name: _unnamed, ...rest } = object;
    return { ...rest, text: newText };
  }
}

/** pg.Pool options for `mode`: in transaction mode its clients are TransactionModeClients. */
export function poolModeConfig(mode: PoolMode | undefined): Pick<pg.PoolConfig, "Client"> {
  return mode === "transaction" ? { Client: TransactionModeClient as unknown as typeof pg.Client } : {};
}
