/**
 * Runs once when the web server starts (`next start`: when it serves its first request), in the Node runtime:
 * - every incoming request is stamped with its TCP peer's address (server/peer-address.ts: X-Forwarded-For alone
 *   cannot be trusted), first, so no later await delays it;
 * - like every Holdfast process, it refuses to start without the deployment's secret key, or with a key that is not
 *   the one this database's secrets were encrypted with (checked as soon as the database answers).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { stampPeerAddress } = await import("./server/peer-address");
  stampPeerAddress();
  const { requireSecretKey } = await import("@holdfast/core/run");
  const { createLogger } = await import("@holdfast/core/base");
  const { db } = await import("./server/db");
  const { env } = await import("./env");
  // Next serves no request until this returns. With the database out of reach (restarting, or every connection
  // slot taken) it returns as soon as the wait begins, so pages and routes answer 503 in words meanwhile instead of
  // hanging; the check goes on and stops the process on a wrong key the moment the database answers.
  await new Promise<void>((resolve, reject) => {
    requireSecretKey(db, createLogger("web", env.LOG_LEVEL), 1_000, resolve).then(resolve, reject);
  });
}
