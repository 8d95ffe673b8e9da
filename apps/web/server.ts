// The web process in production (`pnpm --filter @holdfast/web start`): Next.js (the built app, `next build`) behind
// Node's own HTTP server, which answers the trigger routes' POSTs itself (src/server/hook-server.ts: the route's own
// handler without Next's page pipeline, for a provider's burst) and hands every other request to Next.
// Built into dist/server.mjs (scripts/build.mjs, by the web's build script after `next build`).
// Usage: node dist/server.mjs [DIR] [-p PORT] [-H HOST], as `next start`: DIR holds the built app (.next; default the
// folder above dist/), PORT from the environment otherwise (default 3000), every interface unless HOST.
import { createServer } from "node:http";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { hookRequest, serveHook } from "./src/server/hook-server";
import { webStartup } from "./src/server/startup";

process.title = "holdfast-web"; // what ps and top show (Next's own server calls itself next-server)
(process.env as Record<string, string | undefined>).NODE_ENV ??= "production"; // as `next start` sets it, before Next loads
const { default: next } = await import("next");

/** Stops the process on a start-up failure, as `next start` does (Next's own handler would only log it and go on). */
function fatal(error: unknown): never {
  console.error("holdfast web could not start:", error);
  process.exit(1);
}

const { values, positionals } = parseArgs({ options: { port: { type: "string", short: "p" }, hostname: { type: "string", short: "H" } }, allowPositionals: true });
const port = Number(values.port ?? process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`holdfast web: the port "${values.port ?? process.env.PORT}" is not a port number (0-65535): set PORT or -p to one`);
  process.exit(78);
}
const hostname = values.hostname;
const dir = resolve(positionals[0] ?? fileURLToPath(new URL("..", import.meta.url)));

const app = next({ dev: false, dir, port, ...(hostname ? { hostname } : {}) });
const handle = app.getRequestHandler();
try {
  await app.prepare();
  await webStartup();
} catch (error) {
  fatal(error);
}

const server = createServer((req, res) => {
  const hook = hookRequest(req);
  if (hook) void serveHook(req, res, hook);
  else void handle(req, res);
});
// An idle kept-alive connection stays open 65 s (Node's default is 5 s): longer than a load balancer's usual 60 s idle
// timeout, so it never reuses a connection this server has just closed (a 502), and a provider's next burst finds its
// connections open. The time allowed for a request's headers stays Node's 60 s.
server.keepAliveTimeout = 65_000;
server.on("error", fatal); // the port taken or not ours to bind: nothing would ever be served
server.listen(port, hostname, () => console.log(`holdfast web on http://${hostname ?? "localhost"}:${port}`));

// SIGTERM (a deploy, docker stop): no new connections; requests in flight are answered, then Next closes and the
// process exits, within 25 s (compose gives 30 before SIGKILL).
const stop = () => {
  setTimeout(() => process.exit(0), 25_000).unref();
  server.close(() => void app.close().finally(() => process.exit(0)));
  server.closeIdleConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
