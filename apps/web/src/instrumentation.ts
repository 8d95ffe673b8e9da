/**
 * Runs once when Next's server starts (in production during server.ts's `app.prepare()`, under `next dev` at the
 * first request), in the Node runtime: the web process's start-up (server/startup.ts, once per process whichever
 * asks first; server.ts waits for it before it listens).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { webStartup } = await import("./server/startup");
  await webStartup();
}
