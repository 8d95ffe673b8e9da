import { AsyncLocalStorage } from "node:async_hooks";
import type { DbScope } from "@holdfast/db";

/**
 * Explicit row-level security scopes for requests authenticated without a session (see db.ts): a trigger's
 * credential names one organisation; the Slack signing secret and the metrics token are deployment-wide.
 */
// One store per process, on globalThis: Next bundles this module into several chunks (instrumentation, each route),
// and the database handle (also one per process) must read the same store the routes write.
const shared = globalThis as typeof globalThis & { holdfastScopeStorage?: AsyncLocalStorage<DbScope> };
shared.holdfastScopeStorage ??= new AsyncLocalStorage<DbScope>();
const explicit = shared.holdfastScopeStorage;

export function withScope<T>(scope: DbScope, fn: () => Promise<T>): Promise<T> {
  return explicit.run(scope, fn);
}

export function explicitScope(): DbScope | undefined {
  return explicit.getStore();
}
