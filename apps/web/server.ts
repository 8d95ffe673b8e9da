// The web process in production (`pnpm --filter @holdfast/web start`): Next.js (the built app, `next build`) behind
// Node's own HTTP server, which answers the trigger routes' POSTs itself (src/server/hook-server.ts: the route's own
// handler without Next's page pipeline, for a provider's burst) and hands every other request to Next.
// Built into dist/server.mjs (scripts/build.mjs, by the web's build script after `next build`).
// Usage: node dist/server.mjs [DIR] [-p PORT] [-H HOST], as `next start`: DIR holds the built app (.next; default the
// working directory), PORT from the environment otherwise (default 3000), every interface unless HOST.
import { createServer } from "node:http";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import next from "next";
import { hookRequest, serveHook } from "./src/server/hook-server";
import { webStartup } from "./src/server/startup";

process.title = "holdfast-web"; // what ps and top show (Next's own server calls itself next-server)

const { values, positionals } = parseArgs({ options: { port: { type: "string", short: "p" }, hostname: { type: "string", short: "H" } }, allowPositionals: true });
const port = Number(values.port ?? process.env.PORT ?? 3000);
const hostname = values.hostname;

const app = next({ dev: false, dir: resolve(positionals[0] ?? "."), port, ...(hostname ? { hostname } : {}) });
const handle = app.getRequestHandler();
await app.prepare();
await webStartup();

const server = createServer((req, res) => {
  const hook = hookRequest(req);
  if (hook) void serveHook(req, res, hook);
  else void handle(req, res);
});
server.listen(port, hostname, () => console.log(`holdfast web on http://${hostname ?? "localhost"}:${port}`));

const stop = () => {
  server.close();
  void app.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 5_000).unref();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
