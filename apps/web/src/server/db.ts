import { createLogger } from "@holdfast/core/base";
import { databasePing } from "@holdfast/core/store";
import { sessionCookie, sessionIdOf } from "@holdfast/core/people";
import { Outages, redisTargetAtStart } from "@holdfast/core/run";
import { createDb, type Db, type DbScope } from "@holdfast/db";
import { createWakePublisher, type WakePublisher } from "@holdfast/queue";
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
  if (serverCopy) return {}; // no session here (see below)
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
// In production two copies of this module run in the web process: Next's bundle's, and the web server's (server.ts,
// bundled apart for the trigger routes; its bundle defines __HOLDFAST_SERVER_BUNDLE__, scripts/build.mjs). They share
// the outage watch and the Redis publisher, but each keeps its own database client and pool (up to DB_POOL_SIZE
// connections each, opened as needed and then kept, so each holds the most it has needed): one copy's Prisma client
// cannot run the other copy's queries, and only Next's copy can read a request's session cookie (next/headers reads
// Next's own request context; the web server's copy serves trigger deliveries, whose scope is explicit, and finds no
// session: the empty scope).
const cache = globalThis as typeof globalThis & {
  holdfastWebDb?: Db;
  holdfastHookDb?: Db;
  holdfastWebOutages?: Outages;
  holdfastWebWake?: WakePublisher;
};
declare const __HOLDFAST_SERVER_BUNDLE__: boolean | undefined;
const serverCopy = typeof __HOLDFAST_SERVER_BUNDLE__ !== "undefined" && __HOLDFAST_SERVER_BUNDLE__ === true;

/**
 * The web's outage watch (core/ops/outage.ts): a request that finds the database gone reports it here, so the log says
 * once that it is down and once that it is back, not once per request. No periodic check: the web notices on use
 * (and `next build`, which loads this module, never probes).
 */
export const outages: Outages =
  cache.holdfastWebOutages ??
  new Outages({ log: createLogger("web", env.LOG_LEVEL), services: [{ service: "database", probe: () => databasePing(db) }], checkEveryMs: 0 });
cache.holdfastWebOutages = outages;

const existingDb = serverCopy ? cache.holdfastHookDb : cache.holdfastWebDb;
export const db: Db =
  existingDb ??
  createDb(webDatabaseUrl, {
    poolSize: env.DB_POOL_SIZE,
    applicationName: serverCopy ? "holdfast-web-hooks" : "holdfast-web",
    scope: requestScope,
    // Through PgBouncer's transaction mode the scope is set per transaction, never on the session (packages/db/src/scope.ts).
    poolMode: env.DATABASE_POOL_MODE,
    onConnectionError: (error) => outages.report(error),
    // A provider's burst after a quiet spell: its connections are open (docs/performance.md, "Intake").
    keepOpen: true,
  });
if (serverCopy) cache.holdfastHookDb = db;
else cache.holdfastWebDb = db;

/**
 * Where a trigger's start announces its first steps to the lane workers (queue/wake.ts): Redis pub/sub after the
 * commit, in place of the outbox trigger's NOTIFY. Opened on the first start, not at import (`next build` loads this
 * module); none with WAKEUPS=poll, where lane workers poll the outbox. A start made while it is not connected NOTIFYs.
 */
export function wakePublisher(): WakePublisher | undefined {
  if (env.WAKEUPS !== "redis") return undefined;
  if (!cache.holdfastWebWake) {
    // Said once per outage: while announcing fails nothing is lost, the starts NOTIFY again (queue/wake.ts `connected`).
    const log = createLogger("web", env.LOG_LEVEL);
    let away = false;
    cache.holdfastWebWake = createWakePublisher({
      redis: redisTargetAtStart(env, log),
      prefix: env.QUEUE_PREFIX,
      onError: (error) => {
        if (away) return;
        away = true;
        log.warn(
          { err: error },
          "cannot announce first steps on Redis (unreachable, or refused: an ACL user needs the channels <QUEUE_PREFIX>:wake:*): trigger starts tell lane workers through PostgreSQL meanwhile",
        );
      },
      onReady: () => {
        if (away) log.info("first steps announced on Redis again");
        away = false;
      },
    });
  }
  return cache.holdfastWebWake;
}
