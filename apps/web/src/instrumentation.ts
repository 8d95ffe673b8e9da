/**
 * Runs once when the web server starts (`next start`: when it serves its first request), in the Node runtime:
 * - every incoming request is stamped with its TCP peer's address (server/peer-address.ts: X-Forwarded-For alone
 *   cannot be trusted), first, so no later await delays it;
 * - like every Holdfast process, it refuses to start without the deployment's secret key, or with a key that is not
 *   the one this database's secrets were encrypted with.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { stampPeerAddress } = await import("./server/peer-address");
  stampPeerAddress();
  const { requireSecretKey, createLogger } = await import("@holdfast/core");
  const { db } = await import("./server/db");
  const { env } = await import("./env");
  await requireSecretKey(db, createLogger("web", env.LOG_LEVEL));
}
