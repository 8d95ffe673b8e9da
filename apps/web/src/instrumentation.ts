/**
 * Runs once when Next's server starts, in the Node runtime: the web process's start-up (server/startup.ts; in
 * production server.ts has run it before listening, and this finds it done).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { webStartup } = await import("./server/startup");
  await webStartup();
}
