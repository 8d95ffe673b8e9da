import { sessionCookie, sessionIdOf } from "@holdfast/core";
import { createDb, type Db, type DbScope } from "@holdfast/db";
import { env, webDatabaseUrl } from "../env";
import { explicitScope } from "./scope";

/**
 * The web process's database handle. It connects as holdfast_web, a role subject to row-level security, and every
 * connection it hands out is stamped with the scope of the request asking (packages/db/src/scope.ts):
 * - a request run inside `withScope` (trigger starts, Slack, inbound email, metrics) has that explicit scope;
 * - any other request (pages, server actions, tRPC) has its session cookie's scope: the database resolves the
 *   session to the user's organisations and checks its expiry itself;
 * - outside a request, nothing.
 * So a query that forgot its `org_id` filter still cannot read another organisation's rows.
 */
async function requestScope(): Promise<DbScope> {
  const scope = explicitScope();
  if (scope) return scope;
  try {
    const { cookies } = await import("next/headers");
    const token = (await cookies()).get(sessionCookie)?.value;
    if (!token || token.length > 200) return {};
    return { sessionHash: sessionIdOf(token) };
  } catch {
    return {}; // not inside a request (start-up checks): no tenant rows
  }
}

// `next dev` re-evaluates modules on every edit; keeping the client on globalThis stops each reload opening a new pool.
const cache = globalThis as typeof globalThis & { holdfastWebDb?: Db };

export const db: Db =
  cache.holdfastWebDb ??
  createDb(webDatabaseUrl, {
    poolSize: env.DB_POOL_SIZE,
    applicationName: "holdfast-web",
    scope: requestScope,
  });
cache.holdfastWebDb = db;
