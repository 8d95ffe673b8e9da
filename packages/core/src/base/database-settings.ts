import { HoldfastError } from "./errors";

/**
 * The database settings' rules that a schema cannot say alone (baseEnv holds the settings themselves): which URL a
 * LISTEN connection and a migration use, and what is missing for a process to work through PgBouncer's transaction
 * mode. Pure: the apps' env.ts call `requireDatabaseSettings`, which says the problem and exits.
 */
export interface DatabaseSettings {
  DATABASE_URL: string;
  DATABASE_POOL_MODE: "session" | "transaction";
  DATABASE_DIRECT_URL?: string | undefined;
}

/** The URL of a dedicated LISTEN connection: DATABASE_DIRECT_URL, else DATABASE_URL (which then keeps sessions). */
export function listenUrl(env: DatabaseSettings): string {
  return env.DATABASE_DIRECT_URL ?? env.DATABASE_URL;
}

/** host:port of a URL, to tell whether two URLs lead to the same server (or pooler). */
function endpoint(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}`;
}

/**
 * What stops `app` from running with these settings, in one sentence (null: nothing). `listens`: the process keeps a
 * LISTEN connection (the relay; a lane worker with LISTEN_DISPATCH=on), which must keep its server session: through
 * a transaction pooler its subscription would stay on a server connection that other clients then use.
 */
export function databaseSettingsProblem(env: DatabaseSettings, app: string, listens: boolean): string | null {
  if (env.DATABASE_POOL_MODE !== "transaction" || !listens) return null;
  if (!env.DATABASE_DIRECT_URL) {
    return (
      `DATABASE_POOL_MODE=transaction but DATABASE_DIRECT_URL is not set: the ${app} LISTENs for PostgreSQL's notifications, ` +
      "which needs a connection that keeps its session, and PgBouncer's transaction mode hands the server connection to " +
      "another client after each transaction. Set DATABASE_DIRECT_URL to a URL that reaches PostgreSQL (or HAProxy) without PgBouncer."
    );
  }
  if (endpoint(env.DATABASE_DIRECT_URL) === endpoint(env.DATABASE_URL)) {
    return (
      `DATABASE_DIRECT_URL leads to the same host and port as DATABASE_URL (${endpoint(env.DATABASE_URL)}), which DATABASE_POOL_MODE=transaction ` +
      `says is a transaction pooler: the ${app}'s LISTEN needs a URL that reaches PostgreSQL (or HAProxy) without PgBouncer.`
    );
  }
  return null;
}

/** For an app's env.ts: says the problem on stderr and exits with EX_CONFIG, as loadEnv does for a bad setting. */
export function requireDatabaseSettings(env: DatabaseSettings, app: string, listens: boolean): void {
  const problem = databaseSettingsProblem(env, app, listens);
  if (!problem) return;
  process.stderr.write(`invalid environment:\n  ${problem}\n`);
  process.exit(78);
}

/**
 * The URL migrations use (they hold a session-level advisory lock across statements, so never a transaction
 * pooler): MIGRATE_DATABASE_URL; else DATABASE_DIRECT_URL, or DATABASE_URL in session mode, as `postgres`. Throws a
 * sentence when only the pooler is known. `asOwner` puts the superuser in a URL (urlAsRole of packages/db).
 */
export function migrateUrl(env: DatabaseSettings & { MIGRATE_DATABASE_URL?: string | undefined }, asOwner: (url: string) => string): string {
  const pooled = env.DATABASE_POOL_MODE === "transaction";
  if (env.MIGRATE_DATABASE_URL) {
    if (pooled && endpoint(env.MIGRATE_DATABASE_URL) === endpoint(env.DATABASE_URL)) {
      throw new HoldfastError(
        "settings",
        `MIGRATE_DATABASE_URL leads to PgBouncer (the host and port of DATABASE_URL, and DATABASE_POOL_MODE=transaction): migrations hold a session lock across statements, so point MIGRATE_DATABASE_URL at PostgreSQL (or HAProxy) directly`,
      );
    }
    return env.MIGRATE_DATABASE_URL;
  }
  if (!pooled) return asOwner(env.DATABASE_URL);
  if (env.DATABASE_DIRECT_URL) return asOwner(env.DATABASE_DIRECT_URL);
  throw new HoldfastError(
        "settings",
    "DATABASE_POOL_MODE=transaction: DATABASE_URL leads to PgBouncer, and migrations hold a session lock across statements, so they cannot go through it. Set MIGRATE_DATABASE_URL (or DATABASE_DIRECT_URL) to a URL that reaches PostgreSQL (or HAProxy) directly",
  );
}
