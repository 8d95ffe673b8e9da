/**
 * What the web process does once before it answers (instrumentation.ts under `next dev`, server.ts in production):
 * - every incoming request is stamped with its TCP peer's address (peer-address.ts: X-Forwarded-For alone cannot be
 *   trusted), first, so no later await delays it;
 * - like every Holdfast process, it refuses to start without the deployment's secret key, or with a key that is not
 *   the one this database's secrets were encrypted with (checked as soon as the database answers).
 * Once per process: Next loads this module in its own bundle beside server.ts's copy, so the promise is kept on
 * globalThis.
 */
const shared = globalThis as typeof globalThis & { holdfastWebStartup?: Promise<void> };

export function webStartup(): Promise<void> {
  shared.holdfastWebStartup ??= start();
  return shared.holdfastWebStartup;
}

async function start(): Promise<void> {
  const { stampPeerAddress } = await import("./peer-address");
  stampPeerAddress();
  const { requireSecretKey } = await import("@holdfast/core/run");
  const { createLogger } = await import("@holdfast/core/base");
  const { db } = await import("./db");
  const { env } = await import("../env");
  // Nothing is served until this returns. With the database out of reach (restarting, or every connection slot
  // taken) it returns as soon as the wait begins, so pages and routes answer 503 in words meanwhile instead of
  // hanging; the check goes on and stops the process on a wrong key the moment the database answers.
  await new Promise<void>((resolve, reject) => {
    requireSecretKey(db, createLogger("web", env.LOG_LEVEL), 1_000, resolve).then(resolve, reject);
  });
}
